/* drivers/virtio/vnet_rx.c: mergeable receive buffers (virtio 1.2
 * s5.1.6.4) against tests/unit/sim_virtio.c's device, split or packed,
 * one buffer per frame or frames of several (GUEST_TSO). The input
 * decides what the device delivers (whole frames over buffers of any
 * split, or as a lying device: any num_buffers, any used length, in any
 * order), how much the driver takes per call and what it gives back.
 * Always checked: every entry lies inside its own slot, a frame's
 * entries add up to its length, no buffer is handed out twice or lost,
 * the driver takes every used buffer (no stall), and a release of a
 * handle the app does not hold is refused. While the device keeps the
 * rules, frames come out whole, in order, byte for byte. With
 * HASH_REPORT (the 20-byte header) the lying device also reports any
 * hash: every frame handed out gets exactly one verdict. */
#include <errno.h>

#include "drivers/virtio/vnet_priv.h"
#include "kernel/mem.h"
#include "sim_virtio.h"
#include "tests/fuzz/fuzz.h"

#define RXF_MAX_OUT 72 /* entries one burst may ask for */
#define RXF_EXPECT  256

struct rxf {
    const uint8_t *in;
    size_t n;
    struct sim_dev *s;
    struct vnet_dev *d;
    bool hostile;
    uint16_t size;
    uint32_t split; /* the honest device's buffer use: 0, whole buffers */
    uint32_t held[1024], nheld;
    uint64_t bogus_releases;
    uint32_t tag;                 /* the next honest frame's */
    uint32_t exp_len[RXF_EXPECT]; /* honest frames not taken yet */
    uint32_t exp_tag[RXF_EXPECT];
    uint32_t exp_head, exp_count;
    uint8_t frame[VNET_GSO_FRAME_MAX];
};

static uint32_t in8(struct rxf *z)
{
    if (!z->n)
        return 0;
    z->n--;
    return *z->in++;
}

static uint32_t in16(struct rxf *z)
{
    return in8(z) << 8 | in8(z);
}

static uint32_t in32(struct rxf *z)
{
    return in16(z) << 16 | in16(z);
}

static uint8_t pattern(uint32_t tag, uint32_t i)
{
    return (uint8_t)(tag * 31u + i * 7u + (i >> 8));
}

/* Whether an honest frame of len bytes is one the driver must take: in
 * bounds, and with chains spread over at most VNET_RX_MAX_BUFS buffers. */
static bool deliverable(const struct rxf *z, uint32_t len)
{
    const struct vnet_dev *d = z->d;
    uint32_t cap = d->rx_post_len;
    if (z->split && z->split < cap)
        cap = z->split;
    uint32_t need = (d->hdr_len + len + cap - 1) / cap;
    return len >= VNET_ETH_HLEN && len <= d->max_frame &&
           (!d->rx_chains || need <= VNET_RX_MAX_BUFS);
}

static void dev_frame(struct rxf *z)
{
    uint32_t len = in16(z) % (z->d->max_frame + 16);
    for (uint32_t i = 0; i < len; i++)
        z->frame[i] = pattern(z->tag, i);
    z->s->mrg_split = z->split;
    bool ok = deliverable(z, len);
    if (!sim_rx_frame(z->s, z->frame, len) || z->hostile)
        return;
    if (!ok) {
        z->hostile = true; /* a frame the driver drops by the rules: no model */
        return;
    }
    FUZZ_CHECK(z->exp_count < RXF_EXPECT);
    uint32_t at = (z->exp_head + z->exp_count++) % RXF_EXPECT;
    z->exp_len[at] = len;
    z->exp_tag[at] = z->tag++;
}

/* The lying device: takes buffers, writes a header with any num_buffers
 * into one, uses one with any length. */
static void dev_lie(struct rxf *z)
{
    struct sim_queue *q = &z->s->q[0];
    z->hostile = true;
    uint32_t op = in8(z);
    if (op & 1)
        simq_take(q, 1 + op % 8);
    if (!q->nheld)
        return;
    uint32_t k = in8(z) % q->nheld;
    struct sim_chain c;
    if (simq_chain(q, &q->held[k], &c) || !c.n)
        return;
    uint8_t *buf = (uint8_t *)(uintptr_t)c.addr[0];
    if ((op & 2) && c.len[0] >= z->d->hdr_len) {
        struct virtio_net_hdr_hash h = {0};
        h.h.num_buffers = (uint16_t)(op & 4 ? in16(z) : in8(z) % 12);
        if (z->d->hdr_len == VNET_HDR_HASH) {
            h.hash_value = in32(z);
            h.hash_report = (uint16_t)(op & 32 ? in16(z) : in8(z) % 11);
        }
        memcpy(buf, &h, z->d->hdr_len);
    }
    if (op & 8) {
        uint32_t len = op & 16 ? in32(z) : in16(z) % (c.len[0] + 1);
        simq_put_used(q, q->held[k].id, len, 1);
        memmove(&q->held[k], &q->held[k + 1], (q->nheld - k - 1) * sizeof(q->held[0]));
        q->nheld--;
    }
}

/* An entry is the slot's bytes: the first of a frame after the
 * headroom, a continuation from where the device wrote. */
static void check_entry(struct rxf *z, const struct vnet_rx *e, bool first)
{
    const struct vnet_dev *d = z->d;
    FUZZ_CHECK(e->buf < d->rxq[0].size && d->rxq[0].owner[e->buf] == VNET_RX_APP);
    for (uint32_t i = 0; i < z->nheld; i++)
        FUZZ_CHECK(z->held[i] != e->buf);
    const uint8_t *slot = vnet_rx_slot(&d->rxq[0], e->buf), *p = e->frame;
    FUZZ_CHECK(p == slot + (first ? VNET_HDR_ROOM : VNET_HDR_ROOM - d->hdr_len));
    FUZZ_CHECK(e->len <= d->rxq[0].stride - (uint32_t)(p - slot));
    FUZZ_CHECK(z->nheld < d->rxq[0].size);
    z->held[z->nheld++] = e->buf;
}

/* An honest frame: the next one sent, whole. */
static void check_content(struct rxf *z, const struct vnet_rx *e, int nb)
{
    FUZZ_CHECK(z->exp_count > 0);
    uint32_t len = z->exp_len[z->exp_head], tag = z->exp_tag[z->exp_head];
    z->exp_head = (z->exp_head + 1) % RXF_EXPECT;
    z->exp_count--;
    FUZZ_CHECK(e[0].frame_len == len);
    for (uint32_t i = 0; i < len; i++)
        z->frame[i] = pattern(tag, i);
    uint32_t off = 0;
    for (int b = 0; b < nb; off += e[b++].len)
        FUZZ_CHECK(!memcmp(e[b].frame, z->frame + off, e[b].len));
}

static void check_frames(struct rxf *z, const struct vnet_rx *rx, int n)
{
    const struct vnet_dev *d = z->d;
    for (int i = 0; i < n;) {
        int nb = rx[i].nbufs;
        FUZZ_CHECK(nb >= 1 && nb <= (d->rx_chains ? VNET_RX_MAX_BUFS : 1) && i + nb <= n);
        uint64_t sum = 0;
        for (int b = 0; b < nb; b++) {
            FUZZ_CHECK(b == 0 || rx[i + b].nbufs == 0);
            check_entry(z, &rx[i + b], b == 0);
            sum += rx[i + b].len;
        }
        FUZZ_CHECK(sum == rx[i].frame_len && sum >= VNET_ETH_HLEN);
        FUZZ_CHECK(sum <= (d->rx_chains ? VNET_GSO_FRAME_MAX : d->max_frame));
        if (!z->hostile)
            check_content(z, &rx[i], nb);
        i += nb;
    }
}

static int drv_burst(struct rxf *z, int max)
{
    struct vnet_rx rx[RXF_MAX_OUT];
    int n = vnet_rx_burst(z->d, rx, max);
    if (z->d->rx_chains && max < VNET_RX_MAX_BUFS) {
        FUZZ_CHECK(n == -EINVAL || n == -EIO);
        return n;
    }
    FUZZ_CHECK(n == -EIO || (n >= 0 && n <= max));
    if (n > 0)
        check_frames(z, rx, n);
    if (!z->hostile)
        FUZZ_CHECK(n >= 0 && !vnet_broken(z->d));
    return n;
}

static void drv_release(struct rxf *z)
{
    uint32_t op = in8(z), before = (uint32_t)z->d->rxq[0].st.bad_release;
    if (op & 1 || !z->nheld) {
        /* a handle the app does not hold: anything, or one given back */
        uint32_t buf = op & 2 ? in32(z) : in8(z) % z->size;
        bool held = false;
        for (uint32_t i = 0; i < z->nheld; i++)
            held |= z->held[i] == buf;
        if (held)
            return;
        vnet_rx_release(z->d, buf);
        FUZZ_CHECK(z->d->rxq[0].st.bad_release == before + 1u);
        return;
    }
    uint32_t k = in8(z) % z->nheld;
    vnet_rx_release(z->d, z->held[k]);
    FUZZ_CHECK(z->d->rxq[0].st.bad_release == before);
    z->held[k] = z->held[--z->nheld];
}

/* Every buffer is somewhere, and after enough calls the driver has
 * taken all the device used (with room for a whole frame each call). */
static void drv_drain(struct rxf *z, int max)
{
    const struct vnet_dev *d = z->d;
    for (int i = 0; i < 2 * d->rxq[0].size + 2; i++)
        if (drv_burst(z, max) < 0)
            return;
    const struct sim_queue *q = &z->s->q[0];
    uint32_t device = simq_pending(q) + q->nheld;
    FUZZ_CHECK(virtq_in_flight(d->rxq[0].vq) == device);
    uint32_t app = 0;
    for (uint32_t s = 0; s < d->rxq[0].size; s++)
        app += d->rxq[0].owner[s] == VNET_RX_APP;
    FUZZ_CHECK(app == z->nheld);
    FUZZ_CHECK(device + d->rxq[0].npending + app + d->rxq[0].mrg_n == d->rxq[0].size);
}

static int pick_max(struct rxf *z)
{
    uint32_t b = in8(z);
    if (!z->d->rx_chains)
        return 1 + (int)(b % 64);
    return b == 0xff ? (int)(in8(z) % VNET_RX_MAX_BUFS) : VNET_RX_MAX_BUFS + (int)(b % 64);
}

static void step(struct rxf *z)
{
    switch (in8(z) % 8) {
    case 0:
    case 1:
        dev_frame(z);
        break;
    case 2:
        dev_lie(z);
        break;
    case 3:
    case 4:
        drv_burst(z, pick_max(z));
        break;
    case 5:
        drv_release(z);
        break;
    case 6:
        /* the driver wants the Ethernet header in a frame's first buffer,
         * after the longest (HASH_REPORT) virtio-net header */
        z->split = in8(z) & 1 ? 0 : 40 + in16(z) % 2048;
        break;
    default:
        drv_drain(z, z->d->rx_chains ? VNET_RX_MAX_BUFS : 1 + (int)(in8(z) % 4));
        break;
    }
}

static const uint64_t rxf_features =
    VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_NET_F_MAC) | VIRTIO_BIT(VIRTIO_NET_F_MTU) |
    VIRTIO_BIT(VIRTIO_NET_F_MRG_RXBUF) | VIRTIO_BIT(VIRTIO_NET_F_GUEST_CSUM) |
    VIRTIO_BIT(VIRTIO_NET_F_GUEST_TSO4) | VIRTIO_BIT(VIRTIO_NET_F_GUEST_TSO6);

static struct rxf rxf;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n > 1024)
        return 0;
    struct rxf *z = &rxf;
    memset(z, 0, offsetof(struct rxf, frame));
    z->in = data;
    z->n = n;
    uint32_t cfg = in8(z);
    bool chains = cfg & 1;
    z->size = (cfg & 2 ? 16 : 8) << !chains; /* 16 KiB slots with chains */
    uint64_t f = rxf_features | (cfg & 4 ? VIRTIO_BIT(VIRTIO_F_RING_PACKED) : 0);
    if (cfg & 8)
        f |= VIRTIO_BIT(VIRTIO_NET_F_CTRL_VQ) | VIRTIO_BIT(VIRTIO_NET_F_HASH_REPORT);
    z->s = sim_new(f, z->size, false);
    sim_set_mq(z->s, 1, 40, 128, 0x3f);
    struct vnet_params p = {.ring_size = z->size, .rx_refill = (uint16_t)(1 + in8(z) % z->size)};
    p.offloads = chains ? VNET_OFF_RX_CSUM | VNET_OFF_RX_TSO : 0;
    z->d = mem_alloc_dma(sizeof(*z->d), 64);
    FUZZ_CHECK(vnet_dev_init(z->d, &z->s->vdev, &p) == 0);
    FUZZ_CHECK(z->d->mrg && z->d->rx_chains == chains);
    FUZZ_CHECK((z->d->hdr_len == VNET_HDR_HASH) == !!(cfg & 8) && !z->d->hash_types == !(cfg & 8));
    while (z->n)
        step(z);
    uint64_t verdicts = 0;
    for (unsigned v = 0; v < VNET_HASH_NVERDICT; v++)
        verdicts += z->d->rxq[0].st.hash[v];
    FUZZ_CHECK(verdicts == (z->d->hash_types ? z->d->rxq[0].st.packets : 0));
    sim_free_all();
    return 0;
}
