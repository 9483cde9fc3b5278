/* virtio-net driver: the interface apps and the lwIP port use.
 *
 * One RX and one TX queue per device, polled. Frames are handed over
 * without copying: RX frames stay owned by the caller until released, TX
 * frames stay owned by the driver until the device has used them, then the
 * tx_done callback gives the cookie back.
 *
 * Every frame (RX and TX) has VNET_HDR_ROOM writable bytes in front of it:
 * the driver writes the virtio-net header there on TX, and an RX frame can
 * therefore be sent on another device with no copy (zero-copy forwarding). */
#ifndef VN_VNET_H
#define VN_VNET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VNET_HDR_ROOM 20 /* sizeof(struct virtio_net_hdr_v1_hash), virtio 1.2 s5.1.6 */
#define VNET_MAX_DEVS 4
/* Queue pairs a device is driven with at most (queues=, VIRTIO_NET_F_MQ);
 * the spec allows 0x8000 (virtio 1.2 s5.1.4). */
#define VNET_MAX_PAIRS 8

enum vnet_txfull { VNET_TXFULL_WAIT = 0, VNET_TXFULL_DROP = 1 };

/* Offloads a user of the driver can handle (vnet_params.offloads); the
 * matching features are negotiated only when asked for and offered:
 *  TX_CSUM  CSUM: frames may leave their TCP/UDP checksum to the device;
 *  TX_TSO   HOST_TSO4/6: TCP frames up to 64 KiB cut into gso_size segments;
 *  RX_CSUM  GUEST_CSUM: frames may arrive with an unfinished checksum
 *           (vnet_rx_off.csum says which ones need no check);
 *  RX_TSO   GUEST_TSO4/6: TCP frames up to 64 KiB over several buffers
 *           (needs MRG_RXBUF and RX_CSUM);
 *  TX_USO   HOST_USO: UDP datagrams up to 64 KiB cut into gso_size
 *           payloads (needs TX_CSUM);
 *  RX_USO   GUEST_USO4/6: UDP datagrams up to 64 KiB over several
 *           buffers, header gso_type UDP_L4 (needs MRG_RXBUF and RX_CSUM).
 * VNET_OFF_ALL is the TCP set lwIP handles. */
#define VNET_OFF_TX_CSUM 1u
#define VNET_OFF_TX_TSO  2u
#define VNET_OFF_RX_CSUM 4u
#define VNET_OFF_RX_TSO  8u
#define VNET_OFF_ALL     15u
#define VNET_OFF_TX_USO  16u
#define VNET_OFF_RX_USO  32u
/* vnet_offloads only (TX_TSO asks for both): HOST_TSO6 negotiated,
 * IPv6 TCP frames up to 64 KiB may ask for GSO (gso_type TCPV6). */
#define VNET_OFF_TX_TSO6 64u

/* Per TX frame: what the device is asked to finish. */
#define VNET_TX_CSUM 1u /* the TCP/UDP checksum (the driver seeds the field) */
#define VNET_TX_GSO                                                                                \
    2u /* TCP (HOST_TSO) or UDP (HOST_USO) segmentation into gso_size                              \
        * payloads (implies CSUM) */
struct vnet_tx_off {
    uint8_t flags; /* VNET_TX_* */
    uint16_t gso_size;
};

/* Per RX frame: what the device says about its L4 checksum (GUEST_CSUM,
 * virtio 1.2 s5.1.6.4): NONE, not checked; VALID, checked and right
 * (DATA_VALID); PARTIAL, checked, but the field holds only the
 * pseudo-header sum: the one's complement sum from csum_start to the end
 * belongs at csum_start + csum_offset (NEEDS_CSUM; always so for GSO
 * frames). */
enum { VNET_RX_CSUM_NONE = 0, VNET_RX_CSUM_VALID = 1, VNET_RX_CSUM_PARTIAL = 2 };
struct vnet_rx_off {
    uint8_t csum;     /* VNET_RX_CSUM_* */
    uint8_t gso_type; /* VIRTIO_NET_HDR_GSO_* without ECN; NONE for one segment */
    uint16_t gso_size;
    uint16_t csum_start, csum_offset; /* PARTIAL only, checked to lie inside the frame */
};

/* How a queue learns that the device used buffers (docs/driver.md):
 * poll: never told, the driver looks (interrupts stay off);
 * irq: a used-buffer notification for every batch the device completes,
 *      and waits halt until one comes;
 * hybrid: NAPI-style, notifications off while there is work, on (with a
 *      re-check) only before a halt. */
enum vnet_notify { VNET_NOTIFY_POLL = 0, VNET_NOTIFY_IRQ = 1, VNET_NOTIFY_HYBRID = 2 };

/* What the appliance asks of the driver (the config line's ring=,
 * kick_batch=, rx_refill=, rx_coalesce=, rx_coalesce_us=, txfull=, features=,
 * notify=, indirect=: apps/apps_net.c). */
struct vnet_params {
    uint16_t ring_size;      /* 0: the device's maximum (capped at 1024) */
    uint16_t kick_batch;     /* frames per kick inside a burst; 0: one kick per burst */
    uint16_t rx_refill;      /* buffers re-posted per refill (one kick each) */
    uint16_t rx_coalesce;    /* frames before a halt's RX interrupt; 0, 1: the first */
    uint32_t rx_coalesce_us; /* ... or this long, whichever comes first */
    uint8_t txfull;          /* enum vnet_txfull */
    uint8_t offloads;        /* VNET_OFF_*: what the caller handles */
    uint64_t features_off;   /* feature bits the user switched off */
    uint8_t notify_rx;       /* enum vnet_notify */
    uint8_t notify_tx;       /* enum vnet_notify */
    uint16_t queues;         /* queue pairs asked for (queues=); 0, 1: one */
    uint8_t indirect;        /* enum vnet_indirect (indirect=) */
    bool vlan_filter;        /* negotiate CTRL_VLAN (vlan=, netif_vlan=): others dropped */
    bool qinq;               /* frames carry an 802.1ad tag outside the 802.1Q one (netif_svlan=) */
};

/* indirect=: VIRTIO_F_INDIRECT_DESC where offered (auto), required (on:
 * vnet_probe answers -EOPNOTSUPP when a device does not offer it), never
 * (off). */
enum vnet_indirect { VNET_INDIRECT_AUTO = 0, VNET_INDIRECT_ON = 1, VNET_INDIRECT_OFF = 2 };

/* features=: comma-separated -NAME words (-event_idx,-mrg_rxbuf,...).
 * check is the config table's hook: 0, or -EINVAL with the allowed names
 * in why. parse gives the bits switched off. */
int vnet_features_check(const char *val, char *why, size_t whylen);
int vnet_features_parse(const char *val, uint64_t *off);

/* notify=: poll|irq|hybrid for both queues, or per queue rx:MODE,tx:MODE
 * (a queue left out polls). check is the config table's hook (0, or
 * -EINVAL with the syntax in why); parse gives both modes. */
int vnet_notify_check(const char *val, char *why, size_t whylen);
int vnet_notify_parse(const char *val, uint8_t *rx, uint8_t *tx);
const char *vnet_notify_name(uint8_t mode);

struct vnet_dev;

/* Finds virtio-net devices on every transport (PCI modern, PCI legacy,
 * MMIO: the virtio_mmio.device= words of cmdline, and ACPI), brings each
 * up to DRIVER_OK with both queues ready and the RX ring full. Returns
 * how many were found (0 is not an error) or -errno. */
int vnet_probe(struct vnet_dev **devs, int max, const struct vnet_params *p, const char *cmdline);

/* The device reset (virtio 1.2 s2.4: 0 written to device_status, then a
 * bounded wait until it reads 0) and brought up again with p's features
 * (s3.1.1), its queues created anew in the memory the last bring-up used
 * (dma_pool.h: nothing taken twice). Whatever the caller holds of the old
 * queues (bound TX slots, RX frames not released, tx_done) is gone. 0;
 * -ETIMEDOUT when the status never reads 0 (FAILED set, one line said
 * why; the old queues' memory is still the device's, so it stays
 * unused); or vnet_dev_init's errors. */
int vnet_dev_renegotiate(struct vnet_dev *d, const struct vnet_params *p);

const uint8_t *vnet_mac(const struct vnet_dev *d);
uint32_t vnet_mtu(const struct vnet_dev *d);     /* payload MTU, 1500 unless negotiated */
uint16_t vnet_rx_size(const struct vnet_dev *d); /* RX ring entries */
unsigned vnet_pairs(const struct vnet_dev *d);   /* queue pairs in use (queues=) */
/* Pair q's TX: how its waits end (enum vnet_notify: poll spins, the others
 * halt for an interrupt on the CPU vnet_queue_cpu named), and how often it was
 * found full and halted. q < vnet_pairs(). */
uint8_t vnet_tx_notify_mode(const struct vnet_dev *d, unsigned q);
void vnet_tx_full_counts(const struct vnet_dev *d, unsigned q, uint64_t *ring_full,
                         uint64_t *halts);

/* The pair the device steers a received IPv4 TCP/UDP frame with these
 * fields (host byte order) to: their Toeplitz hash with the key RSS_CONFIG
 * sent, through its table (entry i is pair i mod N). The same map without
 * RSS, where the device steers by its own hash; 0 with one pair. A sender
 * that wants its replies on the pair it sends on passes the reply's
 * fields (its own destination as saddr). */
unsigned vnet_flow_pair(const struct vnet_dev *d, uint32_t saddr, uint32_t daddr, uint16_t sport,
                        uint16_t dport);
const char *vnet_name(const struct vnet_dev *d);        /* "pci0:3.0 modern" ... */
const char *vnet_ring_format(const struct vnet_dev *d); /* "split" or "packed" */
/* The offloads negotiated (VNET_OFF_*; TX_TSO: IPv4 (HOST_TSO4),
 * TX_TSO6: IPv6 (HOST_TSO6); RX_USO: GUEST_USO4 or 6). */
unsigned vnet_offloads(const struct vnet_dev *d);

/* --- TX --- */
typedef void (*vnet_tx_done_fn)(void *ctx, void *cookie);
void vnet_set_tx_done(struct vnet_dev *d, vnet_tx_done_fn fn, void *ctx);

/* More of a TX frame after its first piece: memory the device reads,
 * left alone until tx_done. */
#define VNET_TX_MAX_FRAGS 16
struct vnet_frag {
    const void *addr;
    uint32_t len;
};

struct vnet_tx {
    void *frame;  /* Ethernet header; VNET_HDR_ROOM bytes before it are ours */
    uint32_t len; /* bytes at frame (with the L2-L4 headers when off asks for offloads) */
    void *cookie; /* handed to tx_done once the device is done with the frame */
    const struct vnet_frag *frags; /* the rest of the frame, in order */
    uint16_t nfrags;               /* at most vnet_tx_max_frags() */
    struct vnet_tx_off off;        /* zero: the frame is complete as it is */
};

/* How many fragments a frame may have: 0 on a bound queue (frames are
 * copied into slots), else VNET_TX_MAX_FRAGS. */
int vnet_tx_max_frags(const struct vnet_dev *d);

/* Queues up to n frames, kicking every kick_batch frames and once at the
 * end of each reservation (kicks the device suppresses are counted, not
 * made). A full ring follows the one rule of docs/driver.md: txfull=wait
 * waits for a batch to come back (cycles spent counted), txfull=drop
 * stops and counts the rest as dropped. A frame whose offload request
 * cannot be met (not negotiated, not TCP/UDP) is dropped, counted and
 * given back through tx_done. Returns the number taken (queued or so
 * dropped); frames not taken stay the caller's. -EIO once the queue is
 * broken. */
int vnet_tx_burst(struct vnet_dev *d, const struct vnet_tx *tx, int n);

/* Polls TX completions, calling tx_done for each. Returns how many, or -EIO. */
int vnet_tx_reclaim(struct vnet_dev *d);

/* Pair q's (q < vnet_pairs(), else -EINVAL): the calls above are pair
 * 0's. A pair's TX is driven by one CPU at a time. */
int vnet_tx_burst_q(struct vnet_dev *d, unsigned q, const struct vnet_tx *tx, int n);
int vnet_tx_reclaim_q(struct vnet_dev *d, unsigned q);
int vnet_tx_in_flight_q(const struct vnet_dev *d, unsigned q);

/* Free TX descriptors right now (after the last reclaim). */
int vnet_tx_space(const struct vnet_dev *d);

/* TX frames the device has not given back yet (after the last reclaim). */
int vnet_tx_in_flight(const struct vnet_dev *d);

/* --- TX through bound slots (for generators) ---
 * Every TX descriptor gets a buffer of its own for the life of the queue,
 * as netmap's rings own theirs: the virtio-net header is zeroed once (no
 * offloads, so it never changes), and a frame costs its own bytes and its
 * length. Frames go out in ring order. The app reserves slots, writes
 * frames into them and sends them; nothing comes back through tx_done. */
struct vnet_txslots {
    uint8_t *frame0; /* slot 0's Ethernet header; slot i is stride bytes further per i */
    uint32_t stride;
    uint32_t room; /* largest frame a slot holds */
    uint16_t num;  /* slots: the TX ring size */
    /* Per slot, the app's note of what it last wrote there. The driver
     * sets a slot's tag to 0 when it copies a frame of its own into it
     * (vnet_tx_burst after binding: lwIP's ARP and ICMP answers). */
    uint16_t *tag;
};

/* Binds the TX queue with slots of room bytes (0: the device's largest
 * frame; more than the largest the device takes: that, 65535 with
 * HOST_USO negotiated) after waiting up to 200 ms for
 * frames in flight to come back, and describes the slots in *out. -EBUSY
 * when they do not come back, -EIO on a broken queue. Once bound,
 * vnet_tx_burst copies its frames into slots and gives them back through
 * tx_done at once; a frame larger than room stays the caller's. */
int vnet_txslots_bind(struct vnet_dev *d, uint32_t room, struct vnet_txslots *out);

/* Free slots in ring order from *first (wrapping at num), up to n, under
 * the one full-ring rule: a ring with fewer than min(n, a quarter ring)
 * free is full, and txfull=wait then waits until max(n, a quarter ring),
 * at most half, is free; txfull=drop returns what is free (maybe 0). A
 * short reservation counts as ring full. Returns the count, or -EIO. */
int vnet_txslots_reserve(struct vnet_dev *d, int n, uint16_t *first);

/* Sends the first n reserved slots with their frame lengths (14 ..
 * room), kicking every kick_batch frames and once at the end. dropped is
 * how many frames the caller could not place for want of a slot under
 * txfull=drop; they are counted with the driver's. Returns n, -EINVAL
 * when n exceeds the reservation (or it was used, or another TX call
 * reserved since) or a length is out of range, -EIO. */
int vnet_txslots_send(struct vnet_dev *d, int n, const uint16_t *len, int dropped);

/* Offloads for every frame the app sends through pair q's bound slots
 * from now on (HOST_USO: UDP datagrams up to 64 KiB, room permitting):
 * the header vnet_hdr_tx_build makes of off for frame, a sample of len
 * bytes whose L4 checksum field it seeds with the pseudo-header sum. The
 * frames sent must share frame's headers, length and that field (the
 * app copies frame; the device finishes each segment's checksum). Frames
 * the driver copies into slots keep a zero header. 0, -EINVAL (q not
 * bound, no off, a frame that cannot be offloaded), -EOPNOTSUPP (the
 * feature is not negotiated). */
int vnet_txslots_offload_q(struct vnet_dev *d, unsigned q, uint8_t *frame, uint32_t len,
                           const struct vnet_tx_off *off);

/* The same on pair q (q < vnet_pairs(), else bind is -EINVAL): each pair
 * binds its own slots; the three calls above are pair 0's. */
int vnet_txslots_bind_q(struct vnet_dev *d, unsigned q, uint32_t room, struct vnet_txslots *out);
int vnet_txslots_reserve_q(struct vnet_dev *d, unsigned q, int n, uint16_t *first);
int vnet_txslots_send_q(struct vnet_dev *d, unsigned q, int n, const uint16_t *len, int dropped);

/* --- RX --- */
/* A frame is one buffer, or with GUEST_TSO (VNET_OFF_RX_TSO) up to
 * VNET_RX_MAX_BUFS consecutive entries: the first has the Ethernet header,
 * nbufs and the frame's length and offload state, the others nbufs 0.
 * Each buffer is released on its own. */
#define VNET_RX_MAX_BUFS 8
struct vnet_rx {
    void *frame;        /* this buffer's bytes; the first has VNET_HDR_ROOM of headroom */
    uint32_t len;       /* bytes in this buffer */
    uint32_t buf;       /* handle for vnet_rx_release */
    uint32_t frame_len; /* first buffer: the whole frame, no virtio-net header */
    uint16_t nbufs;     /* first buffer: the frame's buffers; 0 in the others */
    struct vnet_rx_off off;
};

/* Takes received frames, never more than max entries, never part of a
 * frame (with RX_TSO max must be at least VNET_RX_MAX_BUFS, else -EINVAL),
 * from one pair: with several, the pairs in turn (round-robin from the
 * one after the last polled), the first that has frames. Returns the
 * entries filled, or -EIO when a pair is broken and none had frames. */
int vnet_rx_burst(struct vnet_dev *d, struct vnet_rx *rx, int max);

/* The same from pair q alone (q < vnet_pairs(), else -EINVAL): one CPU
 * per pair polls its own ring; a buffer it takes goes back to that pair
 * (vnet_rx_release), so nothing another pair's CPU touches is written. */
int vnet_rx_burst_q(struct vnet_dev *d, unsigned q, struct vnet_rx *rx, int max);

/* Pair q's RX: how its waits end (enum vnet_notify); poll for a pair not
 * in use. */
uint8_t vnet_rx_notify_mode(const struct vnet_dev *d, unsigned q);

/* Gives a buffer back to the pair it came from (the handle says which);
 * the ring is refilled rx_refill buffers at a time. */
void vnet_rx_release(struct vnet_dev *d, uint32_t buf);

/* --- which CPU a queue's interrupts reach ---
 * Pair q's RX (tx false) or TX notifications (notify=irq|hybrid) sent to
 * the CPU whose local APIC ID is apic_id, cpu being its index: the CPU
 * that polls the queue halts on them (vnet_idle_arm_cpu, vnet_tx_halt).
 * Any time after bring-up (MSI-X: the entry rewritten masked, PCI 3.0
 * s6.8.3.5). 0; VNET_QUEUE_POLLED when an MSI cannot name apic_id (above
 * 255: Intel SDM vol 3 11.11.1's 8-bit destination field; x2APIC IDs
 * beyond it need interrupt remapping, which vnperf does not set up): the
 * queue is polled from then on (its CPU does not halt on it); -EINVAL for
 * a pair not in use, -EOPNOTSUPP when the transport's interrupt reaches
 * the boot CPU only (virtio-mmio's I/O APIC line) and cpu is not 0. */
#define VNET_QUEUE_POLLED 1
int vnet_queue_cpu(struct vnet_dev *d, unsigned q, bool tx, unsigned cpu, uint32_t apic_id);

/* --- waiting for frames (notify=irq|hybrid) ---
 * The race-free halt, for the layer that owns the main loop:
 *   irq_idle_enter(); arm every device; if all returned 0, irq_idle();
 *   else irq_idle_leave(); then vnet_idle_done on each.
 * vnet_idle_arm turns RX notifications on for every pair whose RX CPU 0
 * owns (vnet_queue_cpu; all of them until it is called) and looks at each ring
 * once more: 1 when frames are there (do not halt), 0 when armed, -EAGAIN
 * when one of them is polled or there is none (nothing would end the
 * halt). _cpu: the same for the RX queues CPU cpu owns, on that CPU. With rx_coalesce=N the
 * interrupt is asked for N frames on (EVENT_IDX; at most half the
 * buffers out), so a halt must also end vnet_idle_max_ns() later for
 * the fewer frames that came (0: no limit). vnet_idle_done counts the
 * halt (cycles long, 0 for none) and puts a hybrid queue back to
 * polling. */
int vnet_idle_arm(struct vnet_dev *d);
int vnet_idle_arm_cpu(struct vnet_dev *d, unsigned cpu);
uint64_t vnet_idle_max_ns(const struct vnet_dev *d);
void vnet_idle_done(struct vnet_dev *d, uint64_t cycles);
void vnet_idle_done_cpu(struct vnet_dev *d, unsigned cpu, uint64_t cycles);

/* Whether a halt can end on this device's RX (its queue is not polled). */
bool vnet_can_idle(const struct vnet_dev *d);

/* --- queue reset (VIRTIO_F_RING_RESET, virtio 1.2 s2.6.1) ---
 * Resets pair's TX (tx) or RX queue alone and re-enables it at the same
 * size and addresses, the rest of the device running on. TX first waits
 * up to 200 ms for every frame out to come back (-EBUSY when they do not),
 * so none is lost with the queue; RX takes back every buffer the device
 * held, counting the filled ones not taken yet as dropped, and posts them
 * again (a frame arriving meanwhile is the device's to drop: the spec's
 * receive steering rules). Bound slots stay bound, from slot 0. 0,
 * -EOPNOTSUPP when ring_reset is not negotiated (or the transport has no
 * such register), -EINVAL for a pair not in use, -EIO when the device
 * does not complete the reset (the queue is then broken, vnet_fault). */
int vnet_queue_reset(struct vnet_dev *d, unsigned pair, bool tx);

/* --- state and counters --- */

/* 1 once the device broke a rule (the queue is then dead), else 0. */
int vnet_broken(const struct vnet_dev *d);

struct json;
/* Counters, parameters and negotiated features as JSON members of the
 * currently open object; on a broken device also the violation. */
void vnet_stats_json(const struct vnet_dev *d, struct json *j);

/* The frames the driver took since the last bring-up (vnet_dev_init, or
 * vnet_dev_renegotiate, which starts the counters anew), every pair in use
 * added up: app=reneg adds them over its sets (docs/apps.md, reneg). */
struct vnet_counts {
    uint64_t rx_packets, rx_bytes;
};
void vnet_counts(const struct vnet_dev *d, struct vnet_counts *c);
/* The features negotiated, and a feature set as an array of names under
 * key (virtio's names, bitN for bits without one). */
uint64_t vnet_features(const struct vnet_dev *d);
void vnet_features_json(struct json *j, const char *key, uint64_t f);

/* What broke (see vnet_broken): the queue ("rx", "tx", or "device" for a
 * device status), the rule, and the values the device used. 0, or
 * -ENOENT when nothing broke. */
struct vnet_fault {
    const char *queue;
    const char *what;
    uint32_t id, len, limit;
};
int vnet_fault(const struct vnet_dev *d, struct vnet_fault *f);

#endif
