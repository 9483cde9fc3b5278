/* app=hostile: one case from violation to report (hostile_run.h). */
#include "apps/hostile_run.h"

#include "apps/app_config.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "drivers/virtio/vnet_ctrl.h"
#include "drivers/virtio/vnet_raw.h"
#include "kernel/io.h"
#include "kernel/json.h"
#include "kernel/mem.h"
#include "kernel/result.h"
#include "kernel/time.h"
#include "net/pkt.h"

/* What the guest saw of one case. */
struct hostile_seen {
    int build;      /* the builder's return */
    uint8_t status; /* device status at the end of the watch */
    uint16_t used;  /* used entries the device added during it */
    int restart;    /* vnet_raw_restart's return */
    uint32_t sent, completed;
    bool offered;     /* the device offered what the case needs: it ran */
    char needs[64];   /* the features it needs, by name */
    int ack;          /* HK_CTRL: the ack byte after the watch */
    const char *skip; /* why a case that needs no feature did not run; NULL when it ran */
};

static void hostile_done(void *ctx, void *cookie)
{
    (void)cookie;
    ((struct hostile_run *)ctx)->done++;
}

/* A valid vnperf UDP frame to the peer (apps/docs: the peer counts it). */
static void hostile_frame(const struct app_config *c, uint8_t *f, const uint8_t *src_mac,
                          uint32_t stream)
{
    static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    /* the config holds addresses in network byte order, a flow in host order */
    struct pkt_flow fl = {__builtin_bswap32(c->ip), __builtin_bswap32(c->dst_ip), c->src_port,
                          c->dst_port, stream};
    struct pkt_tmpl t;
    const uint8_t *dst = app_config_given(c, "dst_mac") ? c->dst_mac : bcast;
    pkt_tmpl_build(f, HOSTILE_FRAME, dst, src_mac, &fl, &t);
    pkt_patch(f, &t, stream, 0);
}

void hostile_run_init(struct hostile_run *r, const struct app_config *c, struct vnet_dev *d)
{
    memset(r, 0, sizeof(*r));
    r->cfg = c;
    r->d = d;
    r->t0 = time_ns();
    r->env.buf = mem_alloc_dma(HOSTILE_BUF, 64);
    r->env.tab = mem_alloc_dma(HOSTILE_TAB_ENTS * sizeof(struct virtq_raw_desc), 64);
    r->slots = mem_alloc_dma(HOSTILE_CHECK * HOSTILE_SLOT, 64);
    r->pflags = mem_alloc_dma(VIRTQ_MAX * sizeof(*r->pflags), 64);
    vnet_set_tx_done(d, hostile_done, r);
}

/* Packed: the ring's flags from index at on, before the case writes. */
static void hostile_psnap(struct hostile_run *r, uint16_t at)
{
    const struct virtq *vq = r->env.vq;
    uint16_t num = virtq_size(vq);
    for (uint32_t k = 0; k < num; k++)
        r->pflags[k] = virtq_raw_pflags(vq, (uint16_t)(at + k) & (num - 1u));
}

/* Packed: descriptors the device marked used since the snapshot (s2.8.1:
 * changed, and AVAIL == USED == the wrap counter of their index from at
 * on), less those the case itself wrote so (pmarked). */
static uint16_t hostile_pused(const struct hostile_run *r, uint16_t at)
{
    const struct virtq *vq = r->env.vq;
    const uint16_t both = VIRTQ_RAW_PF_AVAIL | VIRTQ_RAW_PF_USED, num = virtq_size(vq);
    uint16_t n = 0;
    for (uint32_t k = 0; k < num; k++) {
        uint16_t i = (uint16_t)(at + k), f = virtq_raw_pflags(vq, i & (num - 1u));
        n += f != r->pflags[k] && (f & both) == virtq_raw_pbits(vq, i, true);
    }
    return n > r->env.pmarked ? (uint16_t)(n - r->env.pmarked) : 0;
}

/* The kick each kind makes after its layout. */
static void hostile_kick(struct hostile_run *r, const struct hostile_case *c)
{
    struct virtq *vq = r->env.vq;
    if (c->kind == HK_RING || c->kind == HK_RX || c->kind == HK_CTRL || c->kind == HK_PACKED ||
        c->kind == HK_DISQ) {
        virtq_notify(vq);
    } else if (c->kind == HK_BADQ) {
        virtq_raw_notify_as(vq, HOSTILE_BADQ);
    } else if (c->kind == HK_STORM) {
        uint64_t end = time_ns() + 1000000000ull;
        for (uint32_t k = 0; k < HOSTILE_STORM_MAX && (k < HOSTILE_STORM || time_ns() < end); k++)
            virtq_notify(vq);
    } else if (c->kind == HK_SETUP && r->env.bufs) {
        virtq_notify(vq); /* a setup case that left a buffer */
    }                     /* HK_NOTIF: the builder's notification is the case */
}

/* HOSTILE_CHECK frames after the restart; how many came back. */
static void hostile_traffic(struct hostile_run *r, struct hostile_seen *s)
{
    struct vnet_tx tx[HOSTILE_CHECK];
    const uint8_t *mac = vnet_mac(r->d);
    for (uint32_t i = 0; i < HOSTILE_CHECK; i++) {
        uint8_t *f = r->slots + i * HOSTILE_SLOT + VNET_HDR_ROOM;
        hostile_frame(r->cfg, f, mac, (uint32_t)r->cases);
        tx[i] = (struct vnet_tx){.frame = f, .len = HOSTILE_FRAME, .cookie = f};
    }
    r->done = 0;
    int n = vnet_tx_burst(r->d, tx, HOSTILE_CHECK);
    s->sent = n > 0 ? (uint32_t)n : 0;
    uint64_t end = time_ns() + HOSTILE_CHECK_MS * 1000000ull;
    while (r->done < s->sent && time_ns() < end && vnet_tx_reclaim(r->d) >= 0)
        ;
    s->completed = r->done;
}

/* s5.1.6.5: the ack byte as the device left it. */
static const char *hostile_ack_name(int ack)
{
    if (ack == VIRTIO_NET_OK)
        return "ok";
    if (ack == VIRTIO_NET_ERR)
        return "err";
    return ack == HOSTILE_ACK_NONE ? "none" : "other";
}

/* The names of the features in mask, comma separated ("" for none). */
static void hostile_needs(uint64_t mask, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = 0;
    for (unsigned bit = 0; bit < 64; bit++) {
        const char *name = vnet_raw_feature_name(bit);
        if (!(mask & VIRTIO_BIT(bit)) || !name)
            continue;
        int w = snprintf(out + n, cap - n, "%s%s", n ? "," : "", name);
        if (w < 0 || (size_t)w >= cap - n)
            return;
        n += (size_t)w;
    }
}

static void hostile_line(const struct hostile_run *r, const struct hostile_case *c,
                         const struct hostile_seen *s, uint64_t t_ns)
{
    struct json *j = result_begin("hostile");
    json_str(j, "case", c->name);
    json_str(j, "spec", c->spec);
    json_str(j, "allows", c->allows);
    json_str(j, "needs", s->needs);
    json_bool(j, "offered", s->offered);
    if (s->skip)
        json_str(j, "skip", s->skip);
    if (c->kind == HK_CTRL)
        json_str(j, "ack", hostile_ack_name(s->ack));
    if (c->kind == HK_DISQ)
        json_i64(j, "queue", r->env.disq);
    json_i64(j, "build", s->build);
    json_u64(j, "status", s->status);
    json_bool(j, "needs_reset", s->status & VIRTIO_STATUS_DEVICE_NEEDS_RESET);
    json_bool(j, "failed", s->status & VIRTIO_STATUS_FAILED);
    json_bool(j, "features_ok", s->status & VIRTIO_STATUS_FEATURES_OK);
    json_u64(j, "used", s->used);
    json_u64(j, "bufs", r->env.bufs);
    json_u64(j, "features", r->env.features);
    json_i64(j, "restart", s->restart);
    json_u64(j, "sent", s->sent);
    json_u64(j, "completed", s->completed);
    json_u64(j, "t_ns", t_ns);
    result_end();
}

/* The case's violation, its kick and the watch: what the device used. */
static void hostile_violate(struct hostile_run *r, const struct hostile_case *c,
                            struct hostile_seen *s)
{
    struct hostile_env *e = &r->env;
    e->used0 = virtq_raw_used_idx(e->vq);
    uint16_t at = virtq_raw_avail_idx(e->vq);
    bool packed = virtq_packed(e->vq);
    if (packed)
        hostile_psnap(r, at);
    s->build = c->build(e);
    hostile_kick(r, c);
    time_delay_us(HOSTILE_WATCH_MS * 1000u);
    s->used = packed ? hostile_pused(r, at) : (uint16_t)(virtq_raw_used_idx(e->vq) - e->used0);
}

/* What the case works on: its queue (NULL: the control queue of a device
 * without one), the device as brought up, a clean buffer and ack. */
static void hostile_env_set(struct hostile_run *r, const struct hostile_case *c)
{
    struct hostile_env *e = &r->env;
    e->vq = c->kind == HK_RX     ? vnet_raw_rxq(r->d)
            : c->kind == HK_CTRL ? vnet_raw_ctrlq(r->d)
                                 : vnet_raw_txq(r->d);
    e->vdev = vnet_raw_vdev(r->d);
    e->features = vnet_raw_features(r->d);
    e->max_pairs = vnet_raw_max_pairs(r->d);
    e->rss_types = vnet_raw_rss_types(r->d);
    e->pairs = vnet_raw_pairs(r->d);
    e->ctrl = vnet_raw_ctrlq(r->d) != NULL;
    e->disq = c->kind == HK_DISQ ? hostile_disabled_queue(e) : -ENOENT;
    e->txq = 1; /* transmitq(0), virtio 1.2 s5.1.2 */
    e->bufs = 0;
    e->pmarked = 0;
    memset(e->buf, 0, HOSTILE_HDR);
    e->buf[HOSTILE_CTRL_ACK] = HOSTILE_ACK_NONE;
    hostile_frame(r->cfg, e->buf + HOSTILE_HDR, vnet_mac(r->d), 0xffffu);
}

/* Whether the case runs: the features it needs negotiated, its queue
 * there, and for HK_DISQ a queue to notify (else skip says why). */
static void hostile_runs(const struct hostile_run *r, const struct hostile_case *c,
                         struct hostile_seen *s)
{
    const struct hostile_env *e = &r->env;
    hostile_needs(c->needs, s->needs, sizeof(s->needs));
    s->offered = hostile_offered(c, e->features) && e->vq;
    if (s->offered && c->kind == HK_DISQ && e->disq < 0) {
        s->offered = false;
        s->skip = "no queue past the driver's that the device has and the driver left disabled";
    }
}

void hostile_run_case(struct hostile_run *r, const struct hostile_case *c)
{
    struct hostile_seen s = {0};
    uint64_t t0 = time_ns();
    struct hostile_env *e = &r->env;
    hostile_env_set(r, c);
    hostile_runs(r, c, &s);
    if (s.offered)
        hostile_violate(r, c, &s);
    s.status = vnet_raw_status(r->d);
    s.ack = VN_READ_ONCE(e->buf[HOSTILE_CTRL_ACK]);
    s.restart = vnet_raw_restart(r->d);
    if (!s.restart)
        hostile_traffic(r, &s);
    else
        r->restarts_failed++;
    r->cases++;
    r->sent += s.sent;
    r->completed += s.completed;
    hostile_line(r, c, &s, time_ns() - t0);
}

void hostile_run_result(struct hostile_run *r)
{
    uint64_t dt = time_ns() - r->t0;
    struct json *j = result_begin("result");
    json_str(j, "app", "hostile");
    json_u64(j, "packets", r->completed);
    json_u64(j, "bytes", r->completed * HOSTILE_FRAME);
    json_u64(j, "pps", 0);
    json_u64(j, "bps", 0);
    json_u64(j, "duration_ns", dt);
    json_u64(j, "cases", r->cases);
    json_u64(j, "sent", r->sent);
    json_u64(j, "restarts_failed", r->restarts_failed);
    result_end();
}
