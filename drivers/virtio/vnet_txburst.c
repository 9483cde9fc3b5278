/* vnet_tx_burst: frames by reference through the TX pipeline (vnet_tx.c),
 * each cookie given back by tx_done once the device used the frame; on a
 * bound queue copied into slots and given back at once. Each frame's
 * header asks for the offloads its vnet_tx.off names (vnet_hdr.c), and a
 * frame with fragments goes out as one descriptor chain. */
#include <string.h>

#include "drivers/virtio/vnet_priv.h"
#include "kernel/mem.h"

int vnet_tx_max_frags(const struct vnet_dev *d)
{
    return virtq_bound(d->txq[0].vq) ? 0 : VNET_TX_MAX_FRAGS;
}

/* A frame's bytes: its first piece and every fragment. */
static uint32_t vnet_tx_len(const struct vnet_tx *t)
{
    uint32_t len = t->len;
    for (unsigned i = 0; i < t->nfrags; i++)
        len += t->frags[i].len;
    return len;
}

/* Writes frame t's virtio-net header into its headroom: all zero without
 * offloads (virtio 1.2 s5.1.6.2; the legacy 10-byte header is the tail of
 * the same zero bytes; HASH_REPORT's hash fields stay zero), else what
 * vnet_hdr_tx_build makes of the request. 0, or -errno when the request
 * cannot be met. */
static int vnet_tx_hdr(const struct vnet_dev *d, struct vnet_txq *tq, const struct vnet_tx *t,
                       uint32_t len)
{
    uint8_t *room = (uint8_t *)t->frame - VNET_HDR_ROOM;
    memset(room, 0, VNET_HDR_ROOM);
    if (!t->off.flags)
        return 0;
    struct virtio_net_hdr h;
    int r = vnet_hdr_tx_build(&h, t->frame, t->len, len, &t->off, d->features);
    if (r)
        return r;
    memcpy(room + VNET_HDR_ROOM - d->hdr_len, &h, d->hdr_len < sizeof(h) ? d->hdr_len : sizeof(h));
    tq->st.csum++;
    if (h.gso_type != VIRTIO_NET_HDR_GSO_NONE) {
        tq->st.gso_frames++;
        tq->st.gso_bytes += len;
    }
    return 0;
}

/* A frame the device cannot be asked to finish (or with more fragments
 * than a chain takes): dropped, counted, given back (no longer the
 * caller's). */
static void vnet_tx_refuse(const struct vnet_dev *d, struct vnet_txq *tq, const struct vnet_tx *t)
{
    tq->st.offload_refused++;
    if (d->tx_done)
        d->tx_done(d->tx_ctx, t->cookie);
}

/* Fills reserved buffers with n frames by reference: the header in each
 * frame's headroom. *added: buffers filled (refused frames take none).
 * Returns their bytes. */
static uint64_t vnet_tx_fill_ref(const struct vnet_dev *d, struct vnet_txq *tq,
                                 const struct vnet_tx *tx, int n, int *added)
{
    const uint32_t hl = d->hdr_len;
    uint64_t bytes = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (vnet_tx_hdr(d, tq, &tx[i], tx[i].len)) {
            vnet_tx_refuse(d, tq, &tx[i]);
            continue;
        }
        uint8_t *h = (uint8_t *)tx[i].frame - hl;
        tq->bufs[k++] =
            (struct virtq_buf){mem_virt_to_phys(h), tx[i].len + hl, (uintptr_t)tx[i].cookie};
        bytes += tx[i].len;
    }
    *added = k;
    return bytes;
}

/* Copies n frames into the reserved slots from first (tag 0: the app's
 * template is gone). Returns their bytes. */
static uint64_t vnet_tx_fill_copy(struct vnet_txq *tq, const struct vnet_tx *tx, int n,
                                  uint16_t first, uint32_t hl)
{
    struct vnet_txslots *sl = &tq->slots;
    uint64_t bytes = 0;
    for (int i = 0; i < n; i++) {
        uint16_t s = (uint16_t)(first + i) & (sl->num - 1);
        memcpy(sl->frame0 + (size_t)s * sl->stride, tx[i].frame, tx[i].len);
        if (tq->slot_off) /* the app's offload header is not this frame's */
            memset(tq->hdr0 + (size_t)s * sl->stride, 0, hl);
        sl->tag[s] = 0;
        tq->lens[i] = (uint16_t)tx[i].len;
        bytes += tx[i].len;
    }
    return bytes;
}

/* Frames from the start of tx that take one buffer each: on a bound queue
 * those that fit a slot whole with an all-zero header, else those without
 * fragments. */
static int vnet_tx_singles(const struct vnet_txq *tq, const struct vnet_tx *tx, int n, bool bound)
{
    int i = 0;
    if (bound)
        while (i < n && tx[i].len >= VNET_ETH_HLEN && tx[i].len <= tq->slots.room &&
               !tx[i].nfrags && !tx[i].off.flags)
            i++;
    else
        while (i < n && !tx[i].nfrags)
            i++;
    return i;
}

/* Up to n frames of one buffer each. Returns how many were taken (queued
 * or refused), 0 when the ring had no room, or -EIO. */
static int vnet_tx_burst_singles(struct vnet_dev *d, struct vnet_txq *tq, const struct vnet_tx *t,
                                 int n, bool bound)
{
    uint16_t first = virtq_next_slot(tq->vq);
    int k = vnet_tx_reserve(d, tq, n);
    if (k <= 0)
        return k;
    int added = k;
    uint64_t bytes = bound ? vnet_tx_fill_copy(tq, t, k, first, d->hdr_len)
                           : vnet_tx_fill_ref(d, tq, t, k, &added);
    int r = vnet_tx_commit(d, tq, bound ? tq->lens : NULL, tq->bufs, added, bytes, 0);
    if (r < 0)
        return r;
    if (bound && d->tx_done)
        for (int i = 0; i < k; i++)
            d->tx_done(d->tx_ctx, t[i].cookie);
    return k;
}

/* Builds frame t's chain into c: 0, or -errno when its offload request
 * cannot be met. */
static int vnet_tx_fill_chain(const struct vnet_dev *d, struct vnet_txq *tq,
                              const struct vnet_tx *t, struct vnet_txchain *c)
{
    int r = vnet_tx_hdr(d, tq, t, vnet_tx_len(t));
    if (r)
        return r;
    c->seg[0] =
        (struct virtq_seg){mem_virt_to_phys((uint8_t *)t->frame - d->hdr_len), t->len + d->hdr_len};
    for (unsigned i = 0; i < t->nfrags; i++)
        c->seg[1 + i] = (struct virtq_seg){mem_virt_to_phys(t->frags[i].addr), t->frags[i].len};
    c->nseg = (uint16_t)(1 + t->nfrags);
    c->token = (uintptr_t)t->cookie;
    return 0;
}

/* Up to n frames with fragments (at most VNET_TX_CHAINS), reserving their
 * descriptors. Returns how many were taken, 0 when the first did not fit,
 * or -EIO. */
static int vnet_tx_burst_chains(struct vnet_dev *d, struct vnet_txq *tq, const struct vnet_tx *t,
                                int n)
{
    if (t->nfrags > VNET_TX_MAX_FRAGS) {
        vnet_tx_refuse(d, tq, t); /* longer than a chain we build */
        return 1;
    }
    int m = 0, want = 0;
    for (; m < n && m < VNET_TX_CHAINS && t[m].nfrags && t[m].nfrags <= VNET_TX_MAX_FRAGS; m++)
        want += 1 + t[m].nfrags;
    int room = vnet_tx_reserve(d, tq, want);
    if (room <= 0)
        return room;
    int taken = 0, added = 0, descs = 0;
    uint64_t bytes = 0;
    for (; taken < m && descs + 1 + t[taken].nfrags <= room; taken++) {
        struct vnet_txchain *c = &tq->chains[added];
        if (vnet_tx_fill_chain(d, tq, &t[taken], c)) {
            vnet_tx_refuse(d, tq, &t[taken]);
            continue;
        }
        descs += c->nseg;
        bytes += vnet_tx_len(&t[taken]);
        added++;
    }
    struct vnet_txfill f = {NULL, NULL, tq->chains};
    int r = vnet_tx_commit_fill(d, tq, &f, added, descs, bytes, 0);
    if (r < 0)
        return r;
    tq->st.chains += (uint64_t)added;
    return taken;
}

int vnet_txq_burst(struct vnet_dev *d, struct vnet_txq *tq, const struct vnet_tx *tx, int n)
{
    const bool bound = virtq_bound(tq->vq);
    int done = 0;
    while (done < n) {
        const struct vnet_tx *t = tx + done;
        int singles = vnet_tx_singles(tq, t, n - done, bound);
        if (bound && !singles)
            break; /* a frame no slot takes stays the caller's */
        int k = singles ? vnet_tx_burst_singles(d, tq, t, singles, bound)
                        : vnet_tx_burst_chains(d, tq, t, n - done);
        if (k < 0)
            return done ? done : k;
        if (!k) {
            if (d->txfull == VNET_TXFULL_DROP)
                vnet_tx_commit(d, tq, NULL, NULL, 0, 0, n - done);
            break;
        }
        done += k;
    }
    return done;
}

int vnet_tx_burst(struct vnet_dev *d, const struct vnet_tx *tx, int n)
{
    return vnet_txq_burst(d, &d->txq[0], tx, n);
}

int vnet_tx_burst_q(struct vnet_dev *d, unsigned q, const struct vnet_tx *tx, int n)
{
    if (q >= d->npairs)
        return -EINVAL;
    return vnet_txq_burst(d, &d->txq[q], tx, n);
}
