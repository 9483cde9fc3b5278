/* Raw ring writes for app=hostile (virtq_raw.h). */
#include "drivers/virtio/virtq_raw.h"

#include "drivers/virtio/virtq_priv.h"

_Static_assert(sizeof(struct virtq_raw_desc) == sizeof(struct vring_desc), "one ring descriptor");
_Static_assert(VIRTQ_RAW_F_NEXT == VRING_DESC_F_NEXT && VIRTQ_RAW_F_WRITE == VRING_DESC_F_WRITE &&
                   VIRTQ_RAW_F_INDIRECT == VRING_DESC_F_INDIRECT,
               "the flags of s2.7.5");
_Static_assert(sizeof(struct virtq_raw_pdesc) == sizeof(struct vring_packed_desc),
               "one packed descriptor");
_Static_assert(VIRTQ_RAW_PF_AVAIL == VRING_PACKED_DESC_F_AVAIL &&
                   VIRTQ_RAW_PF_USED == VRING_PACKED_DESC_F_USED,
               "the flags of s2.8.1");
_Static_assert(VIRTQ_RAW_EV_DESC == VRING_PACKED_EVENT_DESC, "RING_EVENT_FLAGS_DESC of s2.8.10");

int virtq_raw_desc(struct virtq *vq, uint16_t i, const struct virtq_raw_desc *d)
{
    if (vq->packed || i >= vq->num)
        return -EINVAL;
    struct vring_desc *e = &vq->s.desc[i];
    e->addr = d->addr;
    e->len = d->len;
    e->flags = d->flags;
    e->next = d->next;
    return 0;
}

int virtq_raw_avail(struct virtq *vq, const uint16_t *heads, uint16_t n)
{
    if (vq->packed || n > vq->num)
        return -EINVAL;
    for (uint16_t k = 0; k < n; k++)
        vq->s.avail->ring[(uint16_t)(vq->avail_idx + k) & vq->mask] = heads[k];
    return 0;
}

uint16_t virtq_raw_avail_idx(const struct virtq *vq)
{
    return vq->avail_idx;
}

int virtq_raw_publish(struct virtq *vq, uint16_t idx)
{
    if (vq->packed)
        return -EINVAL;
    barrier_wmb(); /* s2.7.13.3: entries before the index */
    VN_WRITE_ONCE(vq->s.avail->idx, idx);
    vq->avail_idx = idx;
    return 0;
}

int virtq_raw_used_event(struct virtq *vq, uint16_t v)
{
    if (vq->packed)
        return -EINVAL;
    VN_WRITE_ONCE(*vq->s.used_event, v);
    return 0;
}

int virtq_raw_avail_event(struct virtq *vq, uint16_t v)
{
    if (vq->packed)
        return -EINVAL;
    VN_WRITE_ONCE(*vq->s.avail_event, v);
    return 0;
}

uint16_t virtq_raw_used_idx(const struct virtq *vq)
{
    if (vq->packed)
        return 0;
    return VN_READ_ONCE(vq->s.used->idx);
}

void virtq_raw_notify_as(struct virtq *vq, uint16_t index)
{
    struct virtq_doorbell db = vq->db;
    db.index = index;
    db.ring(&db, index); /* the bare index, whatever notification data says */
    vq->stats.kicks++;
}

void virtq_raw_notify_queue(struct virtq *vq, struct virtio_dev *v, uint16_t q)
{
    struct virtq_doorbell own = vq->db;
    v->ops->queue_notifier(v, q, vq);
    struct virtq_doorbell db = vq->db;
    vq->db = own;
    db.ring(&db, q);
    vq->stats.kicks++;
}

int virtq_raw_notify_next(struct virtq *vq, uint16_t next)
{
    if (vq->packed || !vq->notif_data)
        return -EINVAL;
    vq->db.ring(&vq->db, vq->db.index | (uint32_t)next << 16);
    vq->stats.kicks++;
    return 0;
}

int virtq_raw_pdesc(struct virtq *vq, uint16_t pos, const struct virtq_raw_pdesc *d)
{
    if (!vq->packed || pos >= vq->num)
        return -EINVAL;
    struct vring_packed_desc *e = &vq->p.desc[pos];
    e->addr = d->addr;
    e->len = d->len;
    e->id = d->id;
    barrier_wmb(); /* s2.8.21.1: the descriptor before its flags */
    VN_WRITE_ONCE(e->flags, d->flags);
    return 0;
}

uint16_t virtq_raw_pbits(const struct virtq *vq, uint16_t idx, bool used)
{
    if (!vq->packed)
        return 0;
    bool wrap = !(idx & vq->num);
    uint16_t avail = wrap ? VRING_PACKED_DESC_F_AVAIL : 0;
    uint16_t usedb = (wrap == used) ? VRING_PACKED_DESC_F_USED : 0;
    return (uint16_t)(avail | usedb);
}

uint16_t virtq_raw_pflags(const struct virtq *vq, uint16_t pos)
{
    if (!vq->packed || pos >= vq->num)
        return 0;
    return VN_READ_ONCE(vq->p.desc[pos].flags);
}

int virtq_raw_pevent(struct virtq *vq, bool device, uint16_t off_wrap, uint16_t flags)
{
    if (!vq->packed)
        return -EINVAL;
    struct vring_packed_event *ev = device ? vq->p.device : vq->p.driver;
    VN_WRITE_ONCE(ev->off_wrap, off_wrap);
    barrier_wmb(); /* s2.8.10: the offset before the flags that make it count */
    VN_WRITE_ONCE(ev->flags, flags);
    return 0;
}
