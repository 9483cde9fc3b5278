/* The ring formats as the device sees them: split (virtio 1.2 s2.7) and
 * packed (s2.8). Only the virtqueue (virtq_*.c) and the simulated device
 * of the host tests use these; device code goes through virtq.h. */
#ifndef VN_VIRTIO_RING_H
#define VN_VIRTIO_RING_H

#include <stdint.h>

/* Descriptor flags, both formats (s2.7.5, s2.8.6) */
#define VRING_DESC_F_NEXT     1
#define VRING_DESC_F_WRITE    2
#define VRING_DESC_F_INDIRECT 4 /* s2.7.5.3, s2.8.19: addr, len name a table */

/* Split ring, s2.7.5 - s2.7.8 */
#define VRING_AVAIL_F_NO_INTERRUPT 1
#define VRING_USED_F_NO_NOTIFY     1

struct vring_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};
struct vring_avail {
    uint16_t flags;
    uint16_t idx;
    uint16_t ring[]; /* then used_event */
};
struct vring_used_elem {
    uint32_t id;
    uint32_t len;
};
struct vring_used {
    uint16_t flags;
    uint16_t idx;
    struct vring_used_elem ring[]; /* then avail_event */
};

/* Packed ring, s2.8.1, s2.8.13, s2.8.14 */
#define VRING_PACKED_DESC_F_AVAIL (1u << 7)
#define VRING_PACKED_DESC_F_USED  (1u << 15)

#define VRING_PACKED_EVENT_ENABLE  0
#define VRING_PACKED_EVENT_DISABLE 1
#define VRING_PACKED_EVENT_DESC    2  /* only with VIRTIO_F_EVENT_IDX */
#define VRING_PACKED_EVENT_WRAP    15 /* bit of off_wrap holding the wrap counter */

struct vring_packed_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t id;
    uint16_t flags;
};
struct vring_packed_event {
    uint16_t off_wrap; /* descriptor offset, wrap counter in bit 15 */
    uint16_t flags;
};

#endif
