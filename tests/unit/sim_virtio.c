/* Simulated virtio-net device (see sim_virtio.h): the transport, and TX
 * and RX processing on top of the queues' device side (sim_queue.c). */
#include "sim_virtio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/apic.h"
#include "kernel/mem.h"

uint64_t time_tsc_hz = 1000000000ull;
struct sim_dev *sim_current;

/* ---- kernel services the driver needs ---- */

struct sim_alloc {
    void *p;
    struct sim_alloc *next;
};
static struct sim_alloc *sim_allocs;
uint64_t sim_dma_bytes;

void *sim_zalloc(size_t bytes, size_t align)
{
    size_t sz = (bytes + align - 1) & ~(align - 1);
    void *p = aligned_alloc(align, sz ? sz : align);
    if (!p)
        abort();
    memset(p, 0, sz);
    struct sim_alloc *a = malloc(sizeof(*a));
    if (!a)
        abort();
    a->p = p;
    a->next = sim_allocs;
    sim_allocs = a;
    return p;
}

void *mem_alloc_dma(size_t bytes, size_t align)
{
    sim_dma_bytes += (bytes + align - 1) & ~(align - 1);
    return sim_zalloc(bytes, align);
}

void sim_free_all(void)
{
    while (sim_allocs) {
        struct sim_alloc *a = sim_allocs;
        sim_allocs = a->next;
        free(a->p);
        free(a);
    }
    sim_current = NULL;
}

int sim_teardown(void **state)
{
    (void)state;
    sim_free_all();
    return 0;
}

void sim_relax(void)
{
    if (sim_current && (sim_current->auto_tx || sim_current->relax_tx))
        sim_tx_step(sim_current, sim_current->relax_step);
}

/* ---- transport ---- */

static struct sim_dev *sim_of(struct virtio_dev *d)
{
    return (struct sim_dev *)d;
}

static int sim_reset(struct virtio_dev *d)
{
    struct sim_dev *s = sim_of(d);
    if (s->reset_stuck)
        return -ETIMEDOUT;
    s->status = 0;
    s->driver_features = 0;
    for (unsigned q = 0; q < SIM_QMAX; q++) {
        uint16_t max = s->q[q].max;
        memset(&s->q[q], 0, sizeof(s->q[q]));
        s->q[q].max = max;
    }
    return 0;
}

static uint8_t sim_get_status(struct virtio_dev *d)
{
    return sim_of(d)->status;
}

static void sim_set_status(struct virtio_dev *d, uint8_t st)
{
    struct sim_dev *s = sim_of(d);
    /* A modern device refuses features it did not offer. */
    if ((st & VIRTIO_STATUS_FEATURES_OK) && (s->driver_features & ~s->offered))
        st &= (uint8_t)~VIRTIO_STATUS_FEATURES_OK;
    s->status = st;
}

static uint64_t sim_get_features(struct virtio_dev *d)
{
    struct sim_dev *s = sim_of(d);
    return d->legacy ? (s->offered & 0xffffffffu) : s->offered;
}

static void sim_set_features(struct virtio_dev *d, uint64_t f)
{
    sim_of(d)->driver_features = f;
}

static int sim_read_config(struct virtio_dev *d, unsigned off, void *buf, unsigned len)
{
    struct sim_dev *s = sim_of(d);
    if (off + len > sizeof(s->config))
        return -EINVAL;
    memcpy(buf, s->config + off, len);
    return s->config_unstable ? -EIO : 0; /* the transports give up the same way */
}

static uint16_t sim_queue_max(struct virtio_dev *d, unsigned q)
{
    return q < SIM_QMAX ? sim_of(d)->q[q].max : 0;
}

static int sim_queue_setup(struct virtio_dev *d, unsigned q, uint16_t num, uint64_t desc,
                           uint64_t driver, uint64_t device)
{
    struct sim_dev *s = sim_of(d);
    if (q >= SIM_QMAX || num > s->q[q].max || (d->queue_size_fixed && num != s->q[q].max))
        return -EINVAL;
    unsigned flags = 0;
    if (s->driver_features & VIRTIO_BIT(VIRTIO_F_EVENT_IDX))
        flags |= VIRTQ_F_EVENT_IDX;
    if (s->driver_features & VIRTIO_BIT(VIRTIO_F_RING_PACKED))
        flags |= VIRTQ_F_PACKED;
    if (s->driver_features & VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC))
        flags |= VIRTQ_F_INDIRECT;
    simq_attach(&s->q[q], num, desc, driver, device, flags);
    if (s->event_idx)
        simq_set_avail_event(&s->q[q], 0); /* packed: the event structure says so */
    return 0;
}

/* VIRTIO_F_RING_RESET (s2.6.1.1): the queue forgets everything, as the
 * device reset does; what it held unsent is dropped (QEMU purges). Its
 * vector stays: the transports say it again at re-enable. */
static int sim_queue_reset(struct virtio_dev *d, unsigned q)
{
    struct sim_dev *s = sim_of(d);
    if (q >= SIM_QMAX)
        return -EINVAL;
    if (s->qreset_stuck)
        return -ETIMEDOUT;
    if (s->qreset_ready)
        return -EIO;
    uint16_t max = s->q[q].max;
    int vector = s->q[q].vector;
    uint64_t notifies = s->q[q].notifies;
    memset(&s->q[q], 0, sizeof(s->q[q]));
    s->q[q].max = max;
    s->q[q].vector = vector;
    s->q[q].notifies = notifies;
    s->qresets++;
    return 0;
}

/* s5.1.2: the control queue is 2N under MQ, else 2. */
static unsigned sim_ctrl_index(const struct sim_dev *s)
{
    uint16_t n = 1;
    if (s->driver_features & VIRTIO_BIT(VIRTIO_NET_F_MQ))
        memcpy(&n, s->config + 8, 2);
    return 2u * n;
}

static void sim_ctrl_step(struct sim_dev *s);

/* virtio 1.2 s2.9: what a notification must say. Without
 * NOTIFICATION_DATA, the queue's index in 16 bits; with it, 32 bits, the
 * index, then the next avail index (split: avail->idx as published) or
 * (packed) the offset and wrap counter of the first descriptor not made
 * available: the one before it was made available in its lap (its AVAIL
 * bit is that lap's counter, s2.8.1), and it is not available in this one. */
static bool sim_notify_ok(const struct sim_dev *s, unsigned q, const struct virtq_doorbell *db,
                          uint32_t val)
{
    const struct sim_queue *sq = &s->q[q];
    if (!(s->driver_features & VIRTIO_BIT(VIRTIO_F_NOTIFICATION_DATA)))
        return !db->data && val == q;
    if (!sq->ready || !db->data || (val & 0xffffu) != q)
        return false;
    uint16_t next = (uint16_t)(val >> 16);
    if (!sq->packed)
        return next == sq->avail->idx;
    uint16_t off = next & 0x7fffu, wrap = next >> 15;
    if (off >= sq->num)
        return false;
    uint16_t prev = off ? off - 1u : sq->num - 1u, pwrap = off ? wrap : !wrap;
    const uint16_t both = VRING_PACKED_DESC_F_AVAIL | VRING_PACKED_DESC_F_USED;
    uint16_t want_n = wrap ? VRING_PACKED_DESC_F_AVAIL : VRING_PACKED_DESC_F_USED;
    bool prev_avail = !!(sq->pdesc[prev].flags & VRING_PACKED_DESC_F_AVAIL);
    return prev_avail == pwrap && (sq->pdesc[off].flags & both) != want_n;
}

/* The queue rung is the one whose notify address was written: each has
 * its own, as on PCI modern (s4.1.4.4; queue_notifier puts q in addr),
 * and the value must name it too (sim_notify_ok). */
void sim_notify_ring(const struct virtq_doorbell *db, uint32_t val)
{
    struct sim_dev *s = db->ctx;
    unsigned q = (unsigned)db->addr;
    if (q >= SIM_QMAX)
        abort(); /* no queue has that address: the test's doorbell is wrong */
    struct sim_queue *sq = &s->q[q];
    sq->notifies++;
    sq->notify_data = val;
    if (!sim_notify_ok(s, q, db, val))
        sq->notify_bad++;
    if (!sq->ready)
        sq->notify_off++;
    sq->notify_data_seen++;
    if (q == sim_ctrl_index(s) && (s->driver_features & VIRTIO_BIT(VIRTIO_NET_F_CTRL_VQ)))
        sim_ctrl_step(s);
    else if (q % 2 == 1 && s->auto_tx)
        sim_tx_step_q(s, q / 2, 0);
}

static void sim_queue_notifier(struct virtio_dev *d, unsigned q, struct virtq *vq)
{
    struct virtq_doorbell db = {sim_notify_ring, q, sim_of(d), (uint16_t)q, false};
    virtq_set_doorbell(vq, &db);
}

static int sim_irq_setup(struct virtio_dev *d, const char **why)
{
    struct sim_dev *s = sim_of(d);
    if (s->no_irq) {
        *why = "sim: none";
        return -ENODEV;
    }
    s->irq_ready = true;
    return 0;
}

static int sim_queue_irq(struct virtio_dev *d, unsigned q, int *vector, const char **why)
{
    (void)why;
    struct sim_dev *s = sim_of(d);
    if (q >= SIM_QMAX)
        return -ENODEV;
    *vector = SIM_VEC0 + (s->shared_line ? 0 : (int)q);
    s->q[q].vector = *vector;
    return 0;
}

/* As virtio-pci's: the MSI message kernel/apic.h encodes (-ERANGE for a
 * destination it cannot carry), its destination field what the device
 * would send to. */
static int sim_queue_irq_to(struct virtio_dev *d, unsigned q, int vector, uint32_t dest)
{
    struct sim_dev *s = sim_of(d);
    uint64_t addr;
    uint32_t data;
    if (q >= SIM_QMAX || s->q[q].vector != vector)
        return -ENODEV;
    int r = apic_msi_msg(dest, (uint8_t)vector, &addr, &data);
    if (r)
        return r;
    s->q[q].irq_dest = (uint32_t)(addr >> 12) & 0xff;
    return 0;
}

static const struct virtio_ops sim_ops = {
    .reset = sim_reset,
    .get_status = sim_get_status,
    .set_status = sim_set_status,
    .get_features = sim_get_features,
    .set_features = sim_set_features,
    .read_config = sim_read_config,
    .queue_max = sim_queue_max,
    .queue_setup = sim_queue_setup,
    .queue_reset = sim_queue_reset,
    .queue_notifier = sim_queue_notifier,
    .irq_setup = sim_irq_setup,
    .queue_irq = sim_queue_irq,
    .queue_irq_to = sim_queue_irq_to,
};

struct sim_dev *sim_new(uint64_t offered, uint16_t max, bool legacy)
{
    struct sim_dev *s = sim_zalloc(sizeof(*s), 64);
    s->vdev.ops = &sim_ops;
    s->vdev.transport = legacy ? "legacy" : "modern";
    s->vdev.legacy = legacy;
    s->vdev.queue_size_fixed = legacy;
    s->vdev.device_id = 1;
    strcpy(s->vdev.name, "sim0");
    s->offered = offered;
    for (unsigned q = 0; q < SIM_QMAX; q++)
        s->q[q].max = max;
    static const uint8_t mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
    memcpy(s->config, mac, 6);
    s->config[6] = 1; /* link up */
    s->config[10] = 1500 & 0xff;
    s->config[11] = 1500 >> 8;
    sim_current = s;
    return s;
}

/* ---- virtio-net processing ---- */

static uint32_t sim_hdr_len(const struct sim_dev *s)
{
    if (s->driver_features & VIRTIO_BIT(VIRTIO_NET_F_HASH_REPORT))
        return 20u; /* virtio 1.2 s5.1.6: num_buffers, then the hash fields */
    return (s->driver_features &
            (VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_NET_F_MRG_RXBUF)))
               ? 12u
               : 10u;
}

uint32_t sim_avail_pending(const struct sim_dev *s, unsigned q)
{
    return simq_pending(&s->q[q]);
}

uint32_t sim_take(struct sim_dev *s, unsigned q, uint32_t n)
{
    return simq_take(&s->q[q], n);
}

void sim_put_used(struct sim_dev *s, unsigned q, uint32_t id, uint32_t len)
{
    simq_put_used(&s->q[q], id, len, 1);
}

void sim_set_used_idx(struct sim_dev *s, unsigned q, uint16_t idx)
{
    simq_set_used_idx(&s->q[q], idx);
}

void sim_set_avail_event(struct sim_dev *s, unsigned q, uint16_t v)
{
    simq_set_avail_event(&s->q[q], v);
}

/* The frame in a TX buffer: its readable elements after the header. */
static void sim_log_tx(struct sim_dev *s, const struct sim_chain *c)
{
    uint32_t hl = sim_hdr_len(s), skip = hl, off = 0;
    if (s->ntx == SIM_LOG_MAX)
        return;
    /* At the first frame: 16 MiB a fuzz input that only receives skips. */
    if (!s->tx_log)
        s->tx_log = sim_zalloc(sizeof(*s->tx_log) * SIM_LOG_MAX, 64);
    struct sim_frame *f = &s->tx_log[s->ntx];
    f->segs = (uint16_t)c->nr;
    for (unsigned i = 0; i < c->nr; i++) {
        const uint8_t *p = (const uint8_t *)(uintptr_t)c->addr[i];
        uint32_t l = c->len[i];
        uint32_t k = skip < l ? skip : l;
        memcpy(f->hdr + (hl - skip), p, k);
        p += k;
        l -= k;
        skip -= k;
        uint32_t room = SIM_FRAME_MAX - (off < SIM_FRAME_MAX ? off : SIM_FRAME_MAX);
        memcpy(f->data + (off < SIM_FRAME_MAX ? off : SIM_FRAME_MAX), p, l < room ? l : room);
        off += l;
    }
    if (skip)
        return; /* not even a header */
    f->len = off;
    s->ntx++;
}

uint32_t sim_tx_step(struct sim_dev *s, uint32_t n)
{
    return sim_tx_step_q(s, 0, n);
}

uint32_t sim_tx_step_q(struct sim_dev *s, unsigned pair, uint32_t n)
{
    struct sim_queue *sq = &s->q[2 * pair + 1];
    simq_take(sq, n);
    uint32_t done = sq->nheld;
    for (uint32_t k = 0; k < done; k++) {
        const struct sim_held *h = &sq->held[s->out_of_order ? done - 1 - k : k];
        struct sim_chain c;
        if (simq_chain(sq, h, &c) == 0)
            sim_log_tx(s, &c);
        s->tx_seen++;
        simq_put_used(sq, h->id, 0, 1);
    }
    sq->nheld = 0;
    if (s->event_idx)
        simq_set_avail_event(sq, sq->last_avail);
    return done;
}

/* How many RX buffers a frame of total bytes takes: 0 when too few. */
static uint32_t sim_rx_need(const struct sim_dev *s, const struct sim_queue *sq, uint32_t total,
                            bool mrg)
{
    uint32_t need = 0, left = total;
    while (left) {
        struct sim_chain c;
        if ((need && !mrg) || simq_peek(sq, need, &c) || c.n != c.nr + 1)
            return 0;
        uint32_t cap = c.len[c.nr];
        if (mrg && s->mrg_split && cap > s->mrg_split)
            cap = s->mrg_split;
        left -= cap < left ? cap : left;
        need++;
    }
    return need;
}

uint32_t sim_rx_frame(struct sim_dev *s, const void *frame, uint32_t len)
{
    return sim_rx_frame_q(s, 0, frame, len);
}

uint32_t sim_rx_frame_q(struct sim_dev *s, unsigned pair, const void *frame, uint32_t len)
{
    struct sim_queue *sq = &s->q[2 * pair];
    uint32_t hl = sim_hdr_len(s);
    bool mrg = s->driver_features & VIRTIO_BIT(VIRTIO_NET_F_MRG_RXBUF);
    uint32_t need = sim_rx_need(s, sq, hl + len, mrg);
    if (!need)
        return 0;
    const uint8_t *src = frame;
    uint32_t off = 0;
    const uint32_t at = sq->nheld; /* buffers a test holds stay held */
    for (uint32_t b = 0; b < need; b++) {
        simq_take(sq, 1);
        struct sim_chain c;
        simq_chain(sq, &sq->held[at], &c);
        uint8_t *dst = (uint8_t *)(uintptr_t)c.addr[0];
        uint32_t cap = c.len[0], used = 0;
        if (mrg && s->mrg_split && cap > s->mrg_split)
            cap = s->mrg_split;
        if (b == 0) {
            s->rx_last_hdr = dst;
            memset(dst, 0, hl);
            if (s->rx_hdr)
                memcpy(dst, s->rx_hdr, 10);
            if (hl >= 12) {
                uint16_t nb = (uint16_t)need;
                memcpy(dst + 10, &nb, 2);
            }
            if (hl == 20 && s->rx_hash)
                memcpy(dst + 12, s->rx_hash, 8);
            used = hl;
        }
        uint32_t chunk = cap - used < len - off ? cap - used : len - off;
        memcpy(dst + used, src + off, chunk);
        off += chunk;
        used += chunk;
        simq_put_used(sq, sq->held[at].id, used, 1);
        sq->nheld = at;
    }
    if (s->event_idx)
        simq_set_avail_event(sq, sq->last_avail);
    return need;
}

void sim_set_mq(struct sim_dev *s, uint16_t max_pairs, uint8_t key, uint16_t table, uint32_t types)
{
    memcpy(s->config + 8, &max_pairs, 2);
    s->config[17] = key;
    memcpy(s->config + 18, &table, 2);
    memcpy(s->config + 20, &types, 4);
}

/* NOTF_COAL's sets (class 6; virtio 1.3 s5.1.6.5.6): TX_SET every
 * transmit queue (odd), RX_SET every receive queue (even), VQ_SET the
 * queue named (le16 vq_index, le16 reserved, then the parameters). */
static void sim_ctrl_coal(struct sim_dev *s)
{
    const uint8_t *p = s->ctrl_last;
    uint32_t v[2];
    if (p[0] != 6 || (p[1] <= 1 && s->ctrl_last_len != 10) || (p[1] == 2 && s->ctrl_last_len != 14))
        return;
    if (p[1] <= 1) {
        memcpy(v, p + 2, 8);
        for (unsigned q = p[1] == 0 ? 1 : 0; q < SIM_QMAX; q += 2)
            memcpy(s->coal[q], v, 8);
    } else if (p[1] == 2) {
        uint16_t q = (uint16_t)(p[2] | p[3] << 8);
        memcpy(v, p + 6, 8);
        if (q < SIM_QMAX)
            memcpy(s->coal[q], v, 8);
    }
}

/* A command's result (the writable element after the ack): VQ_GET's
 * parameters of the queue named. The bytes written. */
static uint32_t sim_ctrl_result(struct sim_dev *s, uint8_t *out, uint32_t room)
{
    const uint8_t *p = s->ctrl_last;
    if (s->ctrl_last_len != 6 || p[0] != 6 || p[1] != 3 || room < 8)
        return 0;
    uint16_t q = (uint16_t)(p[2] | p[3] << 8);
    memcpy(out, s->coal[q < SIM_QMAX ? q : 0], 8);
    return 8;
}

/* What a device does with a command it accepted: VQ_PAIRS_SET's count
 * (class 4, command 0, le16; s5.1.6.5.5), ANNOUNCE_ACK's status,
 * NOTF_COAL's parameters. */
static void sim_ctrl_apply(struct sim_dev *s)
{
    sim_ctrl_coal(s);
    if (s->ctrl_last_len == 4 && s->ctrl_last[0] == 4 && s->ctrl_last[1] == 0)
        s->pairs = (uint16_t)(s->ctrl_last[2] | s->ctrl_last[3] << 8);
    /* ANNOUNCE_ACK (class 3, command 0; s5.1.6.5.4) clears ANNOUNCE */
    if (s->ctrl_last_len == 2 && s->ctrl_last[0] == 3 && s->ctrl_last[1] == 0)
        s->config[6] &= (uint8_t)~2u;
}

/* The control queue (s5.1.6.5): each buffer's readable elements are the
 * command, its first writable element the ack, a second one the
 * command's result (virtio 1.3), answered as ctrl_mode says. */
static void sim_ctrl_step(struct sim_dev *s)
{
    struct sim_queue *sq = &s->q[sim_ctrl_index(s)];
    simq_take(sq, 0);
    for (uint32_t k = 0; k < sq->nheld; k++) {
        struct sim_chain c;
        s->ctrl_cmds++;
        if (simq_chain(sq, &sq->held[k], &c) || (c.n != c.nr + 1 && c.n != c.nr + 2))
            continue;
        s->ctrl_last_len = 0;
        for (unsigned i = 0; i < c.nr; i++) {
            uint32_t l = c.len[i] < SIM_CTRL_MAX - s->ctrl_last_len
                             ? c.len[i]
                             : SIM_CTRL_MAX - s->ctrl_last_len;
            memcpy(s->ctrl_last + s->ctrl_last_len, (const void *)(uintptr_t)c.addr[i], l);
            s->ctrl_last_len += l;
        }
        if (s->ctrl_mode == SIM_CTRL_SILENT)
            return; /* held for ever */
        uint8_t *ack = (uint8_t *)(uintptr_t)c.addr[c.nr];
        *ack = s->ctrl_mode == SIM_CTRL_ERR ? 1 : s->ctrl_mode == SIM_CTRL_BADACK ? 7 : 0;
        uint32_t len = s->ctrl_mode == SIM_CTRL_LONG ? 2 : s->ctrl_mode == SIM_CTRL_SHORT ? 0 : 1;
        if (s->ctrl_mode == SIM_CTRL_RAW) {
            *ack = s->ctrl_raw_ack;
            len = s->ctrl_raw_len;
        }
        if (s->ctrl_mode == SIM_CTRL_OK) {
            sim_ctrl_apply(s);
            if (c.n == c.nr + 2)
                len += sim_ctrl_result(s, (uint8_t *)(uintptr_t)c.addr[c.nr + 1], c.len[c.nr + 1]);
        }
        simq_put_used(sq, sq->held[k].id, len, 1);
    }
    sq->nheld = 0;
    /* a device that wants to hear of the next command (EVENT_IDX) */
    simq_set_avail_event(sq, sq->last_avail);
}
