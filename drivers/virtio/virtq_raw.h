/* Raw writes into a virtqueue's rings (split or packed), for app=hostile only: a
 * guest that breaks the driver's rules on purpose (docs/hostile.md). The
 * normal path never calls these; nothing here updates the queue's own
 * bookkeeping, so a queue written through them is reset afterwards
 * (the device with it). Every index is checked against the queue size:
 * the violations are in the values written, never in where we write. */
#ifndef VN_VIRTQ_RAW_H
#define VN_VIRTQ_RAW_H

#include <stdbool.h>
#include <stdint.h>

#include "drivers/virtio/virtio.h"
#include "drivers/virtio/virtq.h"

/* Descriptor flags as the split ring spells them (virtio 1.2 s2.7.5). */
#define VIRTQ_RAW_F_NEXT     1u
#define VIRTQ_RAW_F_WRITE    2u
#define VIRTQ_RAW_F_INDIRECT 4u

/* One descriptor, laid out as in the ring and in an indirect table. */
struct virtq_raw_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};

/* The split ring (s2.7). Writes descriptor i of the ring. -EINVAL for i >=
 * size or a packed queue. */
int virtq_raw_desc(struct virtq *vq, uint16_t i, const struct virtq_raw_desc *d);

/* Writes heads[k] into the avail ring entry (avail_idx + k) mod size, for
 * k < n (at most the size). Does not publish. -EINVAL as above. */
int virtq_raw_avail(struct virtq *vq, const uint16_t *heads, uint16_t n);

/* The driver's avail index (what it last published). */
uint16_t virtq_raw_avail_idx(const struct virtq *vq);

/* Stores avail->idx = idx after the entries (any value: the case decides). */
int virtq_raw_publish(struct virtq *vq, uint16_t idx);

/* The driver's used_event (s2.7.10), and the device's avail_event, which
 * only the device may write (s2.7.8): writing it is itself a case. */
int virtq_raw_used_event(struct virtq *vq, uint16_t v);
int virtq_raw_avail_event(struct virtq *vq, uint16_t v);

/* used->idx as the device last wrote it. */
uint16_t virtq_raw_used_idx(const struct virtq *vq);

/* Rings the queue's doorbell with another queue index written to it (a
 * queue that does not exist; on PCI modern without NOTIFICATION_DATA the
 * value is ignored and the kick is the queue's own). */
void virtq_raw_notify_as(struct virtq *vq, uint16_t index);

/* Rings queue q's own doorbell, as the transport v gives it for q (on PCI
 * modern its notify address, s4.1.4.4), with q's index written: a
 * notification for a queue the driver need not have set up. vq lends its
 * doorbell slot for the call and keeps its own. */
void virtq_raw_notify_queue(struct virtq *vq, struct virtio_dev *v, uint16_t q);

/* Rings the queue's doorbell with notification data (virtio 1.2 s2.9,
 * split: the queue's index, then the next avail index) saying next,
 * whatever avail->idx is. -EINVAL on a packed queue or unless
 * NOTIFICATION_DATA was negotiated (only then does the doorbell take the
 * 32 bits). */
int virtq_raw_notify_next(struct virtq *vq, uint16_t next);
/* The packed ring (s2.8). Its descriptors' AVAIL and USED flags (s2.8.1). */
#define VIRTQ_RAW_PF_AVAIL (1u << 7)
#define VIRTQ_RAW_PF_USED  (1u << 15)

/* One packed descriptor (s2.8.13), laid out as in the ring and in a packed
 * indirect table (s2.8.7). */
struct virtq_raw_pdesc {
    uint64_t addr;
    uint32_t len;
    uint16_t id;
    uint16_t flags;
};

/* Writes the descriptor at ring position pos: addr, len and id, then after
 * a write barrier its flags, so a chain whose head is written last is
 * seen whole (s2.8.21.1). -EINVAL for pos >= size or a split queue. */
int virtq_raw_pdesc(struct virtq *vq, uint16_t pos, const struct virtq_raw_pdesc *d);

/* The AVAIL and USED bits that make the descriptor at free-running index
 * idx available on the driver's lap (used: that mark it used), s2.8.1:
 * the wrap counter of idx is 1 on its even laps. 0 on a split queue. */
uint16_t virtq_raw_pbits(const struct virtq *vq, uint16_t idx, bool used);

/* The flags of ring position pos as they are now; 0 for pos >= size or a
 * split queue. */
uint16_t virtq_raw_pflags(const struct virtq *vq, uint16_t pos);

/* RING_EVENT_FLAGS_DESC of an event suppression structure (s2.8.10). */
#define VIRTQ_RAW_EV_DESC 2u

/* Stores an event suppression structure (s2.8.10, s2.8.14): the driver's
 * (ours), or the device's, which only the device may write (writing it is
 * itself a case). -EINVAL on a split queue. */
int virtq_raw_pevent(struct virtq *vq, bool device, uint16_t off_wrap, uint16_t flags);

#endif
