/* virtio-net TX through bound slots (vnet.h): bind, then the pipeline of
 * vnet_tx.c with the app filling the slots it reserved. */
#include <string.h>

#include "drivers/virtio/vnet_priv.h"
#include "kernel/mem.h"

#define VNET_BIND_WAIT_MS 200

static uint64_t vnet_slot_addr(void *ctx, uint16_t i)
{
    const struct vnet_txq *tq = ctx;
    return mem_virt_to_phys(tq->hdr0 + (size_t)i * tq->slots.stride);
}

/* The largest slot: a UDP datagram up to 64 KiB once HOST_USO is
 * negotiated (lengths are 16-bit), else the largest plain frame. */
static uint32_t vnet_slot_room_max(const struct vnet_dev *d)
{
    return d->features & VIRTIO_BIT(VIRTIO_NET_F_HOST_USO) ? UINT16_MAX : d->max_frame;
}

int vnet_txslots_bind_q(struct vnet_dev *d, unsigned q, uint32_t room, struct vnet_txslots *out)
{
    if (q >= d->npairs)
        return -EINVAL;
    struct vnet_txq *tq = &d->txq[q];
    struct virtq *vq = tq->vq;
    if (virtq_broken(vq))
        return -EIO;
    if (!virtq_bound(vq)) {
        int r = vnet_txq_drain(d, tq, VNET_BIND_WAIT_MS);
        if (r < 0)
            return r;
        if (!room)
            room = d->max_frame;
        else if (room > vnet_slot_room_max(d))
            room = vnet_slot_room_max(d);
        uint32_t stride = (VNET_HDR_ROOM + room + 63u) & ~63u;
        /* Zeroed, so every header is all zero for good: no offloads,
         * virtio 1.2 s5.1.6.2. */
        uint8_t *mem = dma_pool_alloc(&d->pool, (size_t)stride * tq->size, 64);
        uint16_t *tag = dma_pool_alloc(&d->pool, sizeof(*tag) * tq->size, 64);
        tq->slots = (struct vnet_txslots){mem + VNET_HDR_ROOM, stride, room, tq->size, tag};
        /* The header is the last hdr_len bytes of the room before the frame. */
        tq->hdr0 = mem + VNET_HDR_ROOM - d->hdr_len;
        r = virtq_bind_slots(vq, vnet_slot_addr, tq, d->hdr_len);
        if (r < 0)
            return r;
    }
    *out = tq->slots;
    return 0;
}

int vnet_txslots_reserve_q(struct vnet_dev *d, unsigned q, int n, uint16_t *first)
{
    struct vnet_txq *tq = &d->txq[q];
    if (!virtq_bound(tq->vq))
        return -EINVAL;
    *first = virtq_next_slot(tq->vq);
    return vnet_tx_reserve(d, tq, n);
}

/* The n slots about to go out get slot_hdr (a frame the driver copied
 * into one since has overwritten it with zeros), and are counted. */
static void vnet_slots_hdr(const struct vnet_dev *d, struct vnet_txq *tq, int n, uint64_t bytes)
{
    /* a hash report header's tail stays zero on TX (s5.1.6.2) */
    size_t hl = d->hdr_len < sizeof(tq->slot_hdr) ? d->hdr_len : sizeof(tq->slot_hdr);
    uint16_t s = virtq_next_slot(tq->vq);
    for (int i = 0; i < n; i++, s = (uint16_t)(s + 1) & (uint16_t)(tq->slots.num - 1))
        memcpy(tq->hdr0 + (size_t)s * tq->slots.stride, &tq->slot_hdr, hl);
    tq->st.csum += (uint64_t)n;
    if (tq->slot_hdr.gso_type != VIRTIO_NET_HDR_GSO_NONE) {
        tq->st.gso_frames += (uint64_t)n;
        tq->st.gso_bytes += bytes;
    }
}

int vnet_txslots_send_q(struct vnet_dev *d, unsigned q, int n, const uint16_t *len, int dropped)
{
    struct vnet_txq *tq = &d->txq[q];
    if (n < 0 || n > tq->reserved)
        return -EINVAL;
    /* Checked before anything is queued, so a bad length queues nothing. */
    uint64_t bytes = 0;
    for (int i = 0; i < n; i++) {
        if (len[i] < VNET_ETH_HLEN || len[i] > tq->slots.room)
            return -EINVAL;
        bytes += len[i];
    }
    if (tq->slot_off)
        vnet_slots_hdr(d, tq, n, bytes);
    return vnet_tx_commit(d, tq, len, NULL, n, bytes, dropped);
}

int vnet_txslots_offload_q(struct vnet_dev *d, unsigned q, uint8_t *frame, uint32_t len,
                           const struct vnet_tx_off *off)
{
    if (q >= d->npairs || !virtq_bound(d->txq[q].vq) || !off || !off->flags)
        return -EINVAL;
    struct vnet_txq *tq = &d->txq[q];
    struct virtio_net_hdr h;
    int r = vnet_hdr_tx_build(&h, frame, len, len, off, d->features);
    if (r)
        return r;
    tq->slot_hdr = h;
    tq->slot_off = true;
    return 0;
}

/* Pair 0's: the single-queue API. */
int vnet_txslots_bind(struct vnet_dev *d, uint32_t room, struct vnet_txslots *out)
{
    return vnet_txslots_bind_q(d, 0, room, out);
}

int vnet_txslots_reserve(struct vnet_dev *d, int n, uint16_t *first)
{
    return vnet_txslots_reserve_q(d, 0, n, first);
}

int vnet_txslots_send(struct vnet_dev *d, int n, const uint16_t *len, int dropped)
{
    return vnet_txslots_send_q(d, 0, n, len, dropped);
}
