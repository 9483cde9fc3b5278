/* A simulated virtio-net device for host unit tests: a struct virtio_ops
 * over plain memory, and device-side ring processing (consume available
 * buffers, produce used ones, in order or not, honest or lying). The
 * device sees a queue only through the addresses the driver gave it, as
 * a real one does. Also supplies what the driver takes from the kernel:
 * mem_alloc_dma and time_tsc_hz. */
#ifndef VN_SIM_VIRTIO_H
#define VN_SIM_VIRTIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/virtio/virtio.h"
#include "drivers/virtio/virtio_ring.h"
#include "drivers/virtio/virtq.h"
#include "sim_irq.h"

#define SIM_PAIRS     8                   /* queue pairs the device may have */
#define SIM_QMAX      (2 * SIM_PAIRS + 1) /* and the control queue */
#define SIM_CTRL_MAX  512
#define SIM_LOG_MAX   8192
#define SIM_FRAME_MAX 2048
#define SIM_SEG_MAX   20 /* past VIRTQ_INDIRECT_MAX and a TX frame's 17 */

struct sim_frame {
    uint32_t len; /* the whole frame; data holds its first SIM_FRAME_MAX bytes */
    uint8_t data[SIM_FRAME_MAX];
    uint8_t hdr[20]; /* the virtio-net header as the driver wrote it */
    uint16_t segs;   /* descriptors the buffer had */
};

/* One buffer's elements as the device reads them. */
struct sim_chain {
    unsigned n, nr; /* elements, of which the first nr device-readable */
    uint64_t addr[SIM_SEG_MAX];
    uint32_t len[SIM_SEG_MAX];
};

/* A buffer the device took (and read, as a device does when it starts
 * processing: a used descriptor may overwrite its ring entries later)
 * and has not used yet. */
struct sim_held {
    uint16_t id;    /* split: head descriptor; packed: buffer id */
    uint16_t ndesc; /* descriptors it took */
    bool bad;       /* malformed: readable after writable, too long */
    bool indirect;  /* read through an indirect table */
    struct sim_chain chain;
};

/* The device side of one queue, either format. Indices are free-running:
 * split ones count avail and used entries, packed ones ring positions. */
struct sim_queue {
    uint16_t max;
    uint16_t num;
    bool ready;
    bool packed;
    bool event_idx;         /* negotiated: the suppression fields are indices */
    bool indirect;          /* VIRTIO_F_INDIRECT_DESC negotiated */
    uint64_t indirect_bufs; /* buffers read through an indirect table */
    struct vring_desc *desc;
    struct vring_avail *avail;
    struct vring_used *used;
    struct vring_packed_desc *pdesc;
    struct vring_packed_event *driver_ev, *device_ev;
    uint16_t *ndesc_of;        /* packed: descriptors per buffer id, as taken */
    uint16_t last_avail;       /* next avail entry or position the device reads */
    uint16_t used_idx;         /* device's used index or position */
    uint64_t notifies;         /* doorbell rings */
    uint32_t notify_data;      /* the last one's value (virtio 1.2 s2.9) */
    uint64_t notify_data_seen; /* rings since the queue was set up */
    uint64_t notify_bad;       /* rings whose value or width broke s2.9 */
    uint64_t notify_off;       /* rings while the driver had not enabled it (s4.1.4.3) */
    uint64_t interrupts;       /* used buffer notifications the device would send */
    int vector;                /* raised with each (sim_irq.h) once the driver set it up; 0: none */
    uint32_t irq_dest;         /* the APIC ID queue_irq_to sent it to (0: the boot CPU's) */
    struct sim_held *held;     /* num entries */
    uint32_t nheld;
};

/* Attaches the device side to a queue's three areas; flags: VIRTQ_F_PACKED,
 * VIRTQ_F_EVENT_IDX, VIRTQ_F_INDIRECT as negotiated. A buffer that breaks
 * a driver rule of indirect descriptors (s2.7.5.3.1, s2.8.19: INDIRECT not
 * negotiated, with NEXT, len not a non-zero multiple of 16 or past the
 * queue size, INDIRECT inside a table, a split table's link out of it or
 * a loop, NEXT inside a packed table) is malformed (held.bad, -EINVAL). */
void simq_attach(struct sim_queue *sq, uint16_t num, uint64_t desc, uint64_t driver,
                 uint64_t device, unsigned flags);

/* Buffers available and not taken. */
uint32_t simq_pending(const struct sim_queue *sq);

/* Takes up to n available buffers (0: all) into held[]. Returns how many. */
uint32_t simq_take(struct sim_queue *sq, uint32_t n);

/* Reads a taken buffer's elements. 0, or -EINVAL for a malformed chain. */
int simq_chain(const struct sim_queue *sq, const struct sim_held *h, struct sim_chain *c);

/* The k-th available buffer not taken yet: 0, -ENOENT, -EINVAL. */
int simq_peek(const struct sim_queue *sq, uint32_t k, struct sim_chain *c);

/* Writes one used element (split) or descriptor (packed, WRITE set when
 * len > 0) for id with len and publishes it. count: the buffers it stands
 * for (IN_ORDER: a batch of the next count buffers, ids by position on
 * the packed ring; 1 otherwise); the used index or position moves past
 * them. Decides, as the device would, whether a used buffer notification
 * is due (counted in interrupts). */
void simq_put_used(struct sim_queue *sq, uint32_t id, uint32_t len, uint16_t count);

/* Lies. Split: a used index from nowhere. Packed: a descriptor with any
 * flags at index at (free-running), nothing else moved. */
void simq_set_used_idx(struct sim_queue *sq, uint16_t idx);
void simq_put_raw(struct sim_queue *sq, uint16_t at, uint16_t id, uint32_t len, uint16_t flags);

/* The device side of available buffer notification suppression: the
 * event index (split: avail_event; packed: off_wrap of index v and
 * RING_EVENT_FLAGS_DESC), or notifications off/on (split: NO_NOTIFY;
 * packed: DISABLE/ENABLE). */
void simq_set_avail_event(struct sim_queue *sq, uint16_t v);
void simq_set_no_notify(struct sim_queue *sq, bool on);

struct sim_dev {
    struct virtio_dev vdev;
    uint8_t status;
    uint64_t offered;
    uint64_t driver_features;
    uint8_t config[24]; /* virtio-net config (s5.1.4): mac, status, mqp, mtu, ..., RSS limits */
    struct sim_queue q[SIM_QMAX];
    bool out_of_order;    /* complete each step's buffers in reverse */
    bool event_idx;       /* ask for kicks via avail_event at the device's position */
    bool auto_tx;         /* complete TX on every notify and on sim_relax */
    bool relax_tx;        /* complete TX on sim_relax (the driver spinning) only */
    uint32_t relax_step;  /* buffers completed per sim_relax; 0: all */
    uint32_t mrg_split;   /* >0: RX frames go into buffers of at most this many bytes */
    bool reset_stuck;     /* status never reads back 0 after a reset */
    bool qreset_stuck;    /* queue_reset never reads back 0 (s4.1.4.3.2) */
    bool qreset_ready;    /* queue_reset completes with the queue still enabled */
    uint64_t qresets;     /* queue resets done */
    bool config_unstable; /* config_generation changes on every read */
    bool no_irq;          /* the transport offers no interrupts */
    bool shared_line;     /* both queues on one vector (MMIO's one line) */
    bool irq_ready;       /* irq_setup ran */
    /* TX: what the device saw (payload after the header); NULL until
     * the first frame */
    struct sim_frame *tx_log;
    uint32_t ntx;
    uint64_t tx_seen;
    uint8_t *rx_last_hdr; /* where the last RX frame's header went */
    const void *rx_hdr;   /* non-NULL: the first 10 header bytes of RX frames */
    const void *rx_hash;  /* non-NULL: with HASH_REPORT, header bytes 12..19 of RX frames */
    /* The control queue: how it answers, and what it was sent. */
    uint8_t ctrl_mode;               /* enum sim_ctrl_mode */
    uint64_t ctrl_cmds;              /* commands taken */
    uint8_t ctrl_last[SIM_CTRL_MAX]; /* the last command's readable bytes */
    uint32_t ctrl_last_len;
    uint16_t pairs; /* after VQ_PAIRS_SET answered OK */
    uint8_t ctrl_raw_ack;
    uint32_t ctrl_raw_len;
    /* NOTF_COAL (virtio 1.3 s5.1.6.5.6): each queue's max_packets and
     * max_usecs after TX_SET, RX_SET or VQ_SET answered OK */
    uint32_t coal[SIM_QMAX][2];
};

/* How the simulated control queue answers (virtio 1.2 s5.1.6.5). */
enum sim_ctrl_mode {
    SIM_CTRL_OK = 0,   /* VIRTIO_NET_OK, used length 1 */
    SIM_CTRL_ERR,      /* VIRTIO_NET_ERR */
    SIM_CTRL_SILENT,   /* takes the buffer, never uses it */
    SIM_CTRL_SHORT,    /* OK with used length 0: no ack written */
    SIM_CTRL_LONG,     /* OK with used length 2: more than the ack's one byte */
    SIM_CTRL_BADACK,   /* an ack that is neither OK nor ERR */
    SIM_CTRL_RAW,      /* ctrl_raw_ack with used length ctrl_raw_len (the fuzzer's) */
    SIM_CTRL_NORESULT, /* OK with used length 1 for a command whose result it did not write */
};

/* Sets max_virtqueue_pairs and the RSS limits in the config space. */
void sim_set_mq(struct sim_dev *s, uint16_t max_pairs, uint8_t key, uint16_t table, uint32_t types);

/* A fresh device offering these features, with queues of max entries. */
struct sim_dev *sim_new(uint64_t offered, uint16_t max, bool legacy);
/* The device side's own memory (zeroed, freed by sim_free_all), not
 * counted in sim_dma_bytes: that is the driver's. */
void *sim_zalloc(size_t bytes, size_t align);
void sim_free_all(void);        /* every sim and every mem_alloc_dma buffer */
int sim_teardown(void **state); /* a cmocka teardown: sim_free_all */

/* TX processing: take up to n available buffers (0: all) and use them,
 * logging each frame, used len 0. Returns how many. */
uint32_t sim_tx_step(struct sim_dev *s, uint32_t n);
uint32_t sim_tx_step_q(struct sim_dev *s, unsigned pair, uint32_t n);

/* Delivers one frame into the RX ring (the header with num_buffers
 * first). Returns buffers used, 0 when the ring has too few buffers. */
uint32_t sim_rx_frame(struct sim_dev *s, const void *frame, uint32_t len);
uint32_t sim_rx_frame_q(struct sim_dev *s, unsigned pair, const void *frame, uint32_t len);

/* Shorthands on the device's queue q. */
uint32_t sim_take(struct sim_dev *s, unsigned q, uint32_t n);
void sim_put_used(struct sim_dev *s, unsigned q, uint32_t id, uint32_t len);
void sim_set_used_idx(struct sim_dev *s, unsigned q, uint16_t idx);
void sim_set_avail_event(struct sim_dev *s, unsigned q, uint16_t v);
uint32_t sim_avail_pending(const struct sim_dev *s, unsigned q);

/* The device side of a doorbell (what queue_notifier installs): counts
 * the ring, checks its value (notify_bad), runs the control queue or TX. */
void sim_notify_ring(const struct virtq_doorbell *db, uint32_t val);

extern struct sim_dev *sim_current; /* what sim_relax steps */
extern uint64_t sim_dma_bytes;      /* what mem_alloc_dma handed the driver, all told */

#endif
