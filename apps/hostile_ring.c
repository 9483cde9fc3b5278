/* app=hostile: the layout helpers and the split ring cases (virtio 1.2
 * s2.7). Each builder writes its layout through virtq_raw.h and
 * publishes it; the app kicks. */
#include <errno.h>

#include "apps/hostile.h"
#include "apps/hostile_build.h"

int hostile_desc(struct hostile_env *e, uint16_t i, uint64_t addr, uint32_t len, uint16_t flags,
                 uint16_t next)
{
    struct virtq_raw_desc d = {addr, len, flags, next};
    return virtq_raw_desc(e->vq, i, &d);
}

int hostile_publish(struct hostile_env *e, const uint16_t *heads, uint16_t n)
{
    uint16_t idx = virtq_raw_avail_idx(e->vq);
    int r = virtq_raw_avail(e->vq, heads, n);
    if (r)
        return r;
    e->bufs += n;
    return virtq_raw_publish(e->vq, (uint16_t)(idx + n));
}

/* Header at descriptor at, frame_len bytes of frame at at + 1 (s5.1.6.2:
 * the header first, then the frame, both device-readable). */
int hostile_tx_pair(struct hostile_env *e, uint16_t at, uint32_t frame_len)
{
    uint64_t b = (uintptr_t)e->buf;
    int r = hostile_desc(e, at, b, HOSTILE_HDR, VIRTQ_RAW_F_NEXT, (uint16_t)(at + 1));
    return r ? r : hostile_desc(e, (uint16_t)(at + 1), b + HOSTILE_HDR, frame_len, 0, 0);
}

/* The valid buffer the notification cases kick for. */
int hostile_valid(struct hostile_env *e)
{
    uint16_t head = 0;
    int r = hostile_tx_pair(e, 0, HOSTILE_FRAME);
    return r ? r : hostile_publish(e, &head, 1);
}

/* s2.7.5.2: a chain that comes back to its own head. */
int hostile_chain_loop(struct hostile_env *e)
{
    uint64_t b = (uintptr_t)e->buf;
    uint16_t head = 0;
    int r = hostile_desc(e, 0, b, HOSTILE_HDR, VIRTQ_RAW_F_NEXT, 1);
    if (!r)
        r = hostile_desc(e, 1, b + HOSTILE_HDR, HOSTILE_FRAME, VIRTQ_RAW_F_NEXT, 0);
    return r ? r : hostile_publish(e, &head, 1);
}

/* s2.7.5.3.1: an indirect chain of size + 1 elements with no loop: the
 * header, the frame's first HOSTILE_FRAME bytes, then a byte each. */
int hostile_chain_long(struct hostile_env *e)
{
    uint32_t n = (uint32_t)virtq_size(e->vq) + 1u;
    if (n > HOSTILE_TAB_ENTS || n < 3u)
        return -EINVAL;
    uint64_t f = (uintptr_t)e->buf + HOSTILE_HDR;
    e->tab[0] = (struct virtq_raw_desc){f - HOSTILE_HDR, HOSTILE_HDR, VIRTQ_RAW_F_NEXT, 1};
    e->tab[1] = (struct virtq_raw_desc){f, HOSTILE_FRAME, VIRTQ_RAW_F_NEXT, 2};
    for (uint32_t i = 2; i < n; i++)
        e->tab[i] = (struct virtq_raw_desc){f + HOSTILE_FRAME + i - 2u, 1,
                                            i + 1u < n ? VIRTQ_RAW_F_NEXT : 0, (uint16_t)(i + 1u)};
    uint16_t head = 0;
    int r = hostile_desc(e, 0, (uintptr_t)e->tab, n * 16u, VIRTQ_RAW_F_INDIRECT, 0);
    return r ? r : hostile_publish(e, &head, 1);
}

/* s2.7.6: a ring entry naming a descriptor past the table. */
int hostile_head_range(struct hostile_env *e)
{
    uint16_t head = virtq_size(e->vq);
    return hostile_publish(e, &head, 1);
}

/* s2.7.13.2: the same head twice while the device holds it. */
int hostile_head_twice(struct hostile_env *e)
{
    uint16_t heads[2] = {0, 0};
    int r = hostile_tx_pair(e, 0, HOSTILE_FRAME);
    return r ? r : hostile_publish(e, heads, 2);
}

/* s2.7.13.3: avail->idx more than the queue size past the device. */
int hostile_avail_ahead(struct hostile_env *e)
{
    uint16_t idx = virtq_raw_avail_idx(e->vq);
    int r = hostile_tx_pair(e, 0, HOSTILE_FRAME);
    e->bufs += 1;
    return r ? r : virtq_raw_publish(e->vq, (uint16_t)(idx + virtq_size(e->vq) + 1u));
}

/* s2.7.13.3: avail->idx moved back (one before where the device is). */
int hostile_avail_back(struct hostile_env *e)
{
    uint16_t idx = virtq_raw_avail_idx(e->vq);
    return virtq_raw_publish(e->vq, (uint16_t)(idx - 1u));
}

/* s2.7.10: used_event half the index space away from the used index:
 * any value is allowed, the device must compare in 16 bits. */
int hostile_event_far(struct hostile_env *e)
{
    int r = virtq_raw_used_event(e->vq, (uint16_t)(virtq_raw_used_idx(e->vq) + 0x8000u));
    return r ? r : hostile_valid(e);
}

/* s2.7.8, s2.7.10: the driver writes avail_event, the device's field. */
int hostile_dev_area(struct hostile_env *e)
{
    int r = virtq_raw_avail_event(e->vq, (uint16_t)(virtq_raw_used_idx(e->vq) + 0x4000u));
    return r ? r : hostile_valid(e);
}
