/* A simulated virtio-net device for host unit tests: a struct virtio_ops
 * over plain memory, and device-side ring processing (a step function
 * that consumes avail entries and produces used ones, in order or not).
 * Also supplies what the driver takes from the kernel: mem_alloc_dma and
 * time_tsc_hz. */
#ifndef VN_SIM_VIRTIO_H
#define VN_SIM_VIRTIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/virtio/virtio.h"
#include "drivers/virtio/virtq.h"

#define SIM_QMAX      2
#define SIM_LOG_MAX   8192
#define SIM_FRAME_MAX 2048

struct sim_frame {
    uint32_t len;
    uint8_t data[SIM_FRAME_MAX];
};

struct sim_queue {
    uint16_t max;
    uint16_t num;
    bool ready;
    struct vring_desc *desc;
    struct vring_avail *avail;
    struct vring_used *used;
    uint16_t last_avail; /* next avail entry the device reads */
    uint16_t used_idx;   /* device's used index (published on flush) */
    uint64_t notifies;
    /* taken from avail, not yet used */
    uint16_t held[VIRTQ_MAX];
    uint32_t nheld;
};

struct sim_dev {
    struct virtio_dev vdev;
    uint8_t status;
    uint64_t offered;
    uint64_t driver_features;
    uint8_t config[16]; /* virtio-net config: mac, status, mqp, mtu */
    struct sim_queue q[SIM_QMAX];
    bool out_of_order;    /* complete each step's buffers in reverse */
    bool event_idx;       /* device side of EVENT_IDX: ask for kicks via avail_event */
    bool auto_tx;         /* complete TX on every notify and on sim_relax */
    bool relax_tx;        /* complete TX on sim_relax (the driver spinning) only */
    uint32_t mrg_split;   /* >0: RX frames go into buffers of at most this many bytes */
    bool reset_stuck;     /* status never reads back 0 after a reset */
    bool config_unstable; /* config_generation changes on every read */
    /* TX: what the device saw (payload after the header) */
    struct sim_frame *tx_log;
    uint32_t ntx;
    uint64_t tx_seen;
};

/* A fresh device offering these features, with queues of max entries. */
struct sim_dev *sim_new(uint64_t offered, uint16_t max, bool legacy);
void sim_free_all(void); /* every sim and every mem_alloc_dma buffer */

/* Device-side processing of queue q: take up to n avail entries (0: all)
 * and use them. TX buffers are logged with used len 0. Returns how many. */
uint32_t sim_tx_step(struct sim_dev *s, uint32_t n);

/* Delivers one frame into the RX ring (the header with num_buffers
 * first). Returns buffers used, 0 when the ring has too few buffers. */
uint32_t sim_rx_frame(struct sim_dev *s, const void *frame, uint32_t len);

/* Raw device behaviour for the adversarial tests: take avail entries
 * without using them, write a used element, publish an index. */
uint32_t sim_take(struct sim_dev *s, unsigned q, uint32_t n);
void sim_put_used(struct sim_dev *s, unsigned q, uint32_t id, uint32_t len);
void sim_set_used_idx(struct sim_dev *s, unsigned q, uint16_t idx);

/* The device side of notification suppression. */
void sim_set_avail_event(struct sim_dev *s, unsigned q, uint16_t v);
void sim_set_no_notify(struct sim_dev *s, unsigned q, bool on);

/* Buffers the device holds in q (available and not used). */
uint32_t sim_avail_pending(const struct sim_dev *s, unsigned q);

extern struct sim_dev *sim_current; /* what sim_relax steps */

#endif
