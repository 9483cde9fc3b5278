#include "apps/gen_streams.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/apps_common.h"
#include "apps/hist.h"
#include "apps/seqtrack.h"
#include "apps/stream_fast.h"
#include "apps/stream_sched.h"
#include "kernel/exit.h"
#include "kernel/fwcfg.h"
#include "net/pkt.h"

#define GEN_STREAMS_FILE "opt/vnperf/streams"

struct gen_stream {
    struct stream_tmpl t;
    uint8_t *master;
    struct stream_fe fe[STREAM_VARS_MAX];
    struct stream_fast fast; /* the above as the fast path's loops take them */
    uint8_t *imix_seq;       /* a mix's sizes in turn, NULL for one size or a range */
    unsigned size_pos;
    uint8_t cls;  /* a mix's size index of the last frame */
    uint16_t len; /* one size; a range's next */
    uint64_t seq, rng;
    uint64_t packets, bytes, dropped;
    uint64_t size_packets[IMIX_MAX_SIZES]; /* a mix's, per size */
    /* its frames that came back */
    struct seq_stream rx;
    struct hist lat; /* TSC cycles */
    uint64_t rx_packets, rx_bytes, rx_future;
};

static struct {
    struct stream_spec spec[STREAMS_MAX];
    struct gen_stream s[STREAMS_MAX];
    unsigned n;
    uint16_t copy;
    struct sched sc;
    bool fast;       /* every stream unpaced, continuous, one size: gen_streams_fast */
    uint16_t maxlen; /* of every stream's frames */
} gs;

bool gen_streams_load(void)
{
    static char text[STREAM_TEXT_MAX];
    char why[160];
    int rc = fwcfg_read_file(GEN_STREAMS_FILE, text, sizeof(text));
    if (rc == -ENOENT)
        return false;
    if (rc < 0)
        vn_fatal(VN_EXIT_CONFIG, "gen: %s: above %d bytes", GEN_STREAMS_FILE, STREAM_TEXT_MAX - 1);
    if (stream_spec_parse(text, gs.spec, &gs.n, why, sizeof(why)) < 0)
        vn_fatal(VN_EXIT_CONFIG, "gen: %s", why);
    return true;
}

void gen_streams_one(const struct stream_spec *s)
{
    gs.spec[0] = *s;
    gs.n = 1;
}

static void stream_sizes(struct gen_stream *g, const struct stream_spec *p)
{
    const struct imix *m = &p->sizes;
    g->len = m->size[0];
    if (p->size_range || m->n == 1)
        return;
    g->imix_seq = malloc(m->cycle);
    if (!g->imix_seq)
        vn_fatal(VN_EXIT_OOM, "gen: no memory for a stream's sizes");
    imix_sequence(m, g->imix_seq);
}

static uint16_t spec_maxlen(const struct stream_spec *p)
{
    uint16_t l = 0;
    for (unsigned k = 0; k < p->sizes.n; k++)
        l = p->sizes.size[k] > l ? p->sizes.size[k] : l;
    return l;
}

unsigned gen_streams_setup(const struct stream_addrs *d)
{
    /* Every template as long as the longest headers and stamp, so a slot
     * that held another stream's frame is overwritten in full. */
    gs.copy = 0;
    for (unsigned i = 0; i < gs.n; i++) {
        uint16_t c =
            (uint16_t)(14 + 4 * gs.spec[i].nvlan + (gs.spec[i].ip == 6 ? 40 : 20) + 8 + PL_LEN);
        gs.copy = c > gs.copy ? c : gs.copy;
    }
    for (unsigned i = 0; i < gs.n; i++) {
        const struct stream_spec *p = &gs.spec[i];
        struct gen_stream *g = &gs.s[i];
        uint16_t len = spec_maxlen(p);
        uint32_t varies = 0;
        g->master = calloc(1, len > gs.copy ? len : gs.copy);
        if (!g->master)
            vn_fatal(VN_EXIT_OOM, "gen: no memory for stream %u's template", i);
        for (unsigned k = 0; k < p->nvars; k++)
            varies |= 1u << p->var[k].field;
        if (stream_tmpl_build(g->master, len, p, d, i, varies, &g->t) < 0)
            vn_fatal(VN_EXIT_CONFIG, "gen: stream %u: no frame of %u bytes holds its headers", i,
                     len);
        for (unsigned k = 0; k < p->nvars; k++)
            stream_fe_init(&g->fe[k], &p->var[k], &g->t);
        g->fast = (struct stream_fast){.t = &g->t,
                                       .master = g->master,
                                       .tag = (uint16_t)(i + 1),
                                       .len = len,
                                       .nvars = p->nvars,
                                       .fe = g->fe,
                                       .seq = &g->seq,
                                       .rng = &g->rng};
        stream_fast_init(&g->fast);
        gs.maxlen = len > gs.maxlen ? len : gs.maxlen;
        stream_sizes(g, p);
        hist_init(&g->lat);
    }
    return gs.n;
}

int gen_streams_start(uint64_t tsc_hz, uint64_t seed, uint64_t now)
{
    for (unsigned i = 0; i < gs.n; i++)
        gs.s[i].rng = (seed + i) * 0x9e3779b97f4a7c15ull + 7;
    int rc = sched_init(&gs.sc, gs.spec, gs.n, tsc_hz, now, seed);
    gs.fast = rc == 0 && gs.sc.free_run;
    for (unsigned i = 0; i < gs.n; i++)
        gs.fast = gs.fast && !gs.s[i].t.size_varies;
    return rc;
}

uint16_t gen_streams_maxlen(void)
{
    return gs.maxlen;
}

/* This frame's length: one size, a mix's next, or a range's walk. */
static inline uint16_t next_len(struct gen_stream *g, const struct stream_spec *p)
{
    if (!g->t.size_varies)
        return g->len;
    if (g->imix_seq) {
        g->cls = g->imix_seq[g->size_pos];
        uint16_t l = p->sizes.size[g->cls];
        g->size_pos = g->size_pos + 1 == p->sizes.cycle ? 0 : g->size_pos + 1;
        return l;
    }
    uint16_t l = g->len;
    g->len = l == p->sizes.size[1] ? p->sizes.size[0] : (uint16_t)(l + 1);
    return l;
}

/* Stream i's frame in f (its template there), tsc_sum the timestamp's
 * share of the UDP sum; its length. */
static inline uint16_t stream_write(unsigned i, uint8_t *f, uint64_t now, uint32_t tsc_sum)
{
    struct gen_stream *g = &gs.s[i];
    const struct stream_spec *p = &gs.spec[i];
    uint32_t udp = g->t.udp_base + tsc_sum, ip = g->t.ip_base;
    for (unsigned k = 0; k < p->nvars; k++)
        stream_fe_apply(&g->fe[k], f, &g->t, &g->rng, &udp, &ip);
    uint16_t len = next_len(g, p);
    if (g->imix_seq)
        g->size_packets[g->cls]++;
    stream_frame_finish_sum(f, &g->t, len, udp, ip, g->seq++, now);
    sched_sent(&gs.sc, i, len, now);
    g->packets++;
    g->bytes += len;
    return len;
}

/* The driver's slots as the stream loops take them: a slot that held
 * another stream's template differs only in the first gs.copy bytes (the
 * rest is zero in every template); one the driver copied a frame of its
 * own into (tag 0) is cleared over the longest frame. */
static inline struct stream_slots slots_of(const struct vnet_txslots *sl)
{
    return (struct stream_slots){.frame0 = sl->frame0,
                                 .tag = sl->tag,
                                 .stride = sl->stride,
                                 .mask = (uint16_t)(sl->num - 1),
                                 .clear = gs.maxlen,
                                 .copy = gs.copy};
}

/* gen_streams_burst when every stream is unpaced, continuous and of one
 * size (the shorthand's case, and a file of such streams): every frame is
 * due and the streams take turns (the scheduler's free run), so the burst's
 * slots are the streams' in turn and each stream writes its own in a loop
 * of its own (stream_fast_frames): no scheduler per frame, the checksums
 * carried from frame to frame. */
static int gen_streams_fast(struct vnet_txslots *sl, uint16_t first, int k, int max, uint64_t left,
                            bool drop, uint64_t now, uint16_t *lens, uint64_t *bytes, int *dropped)
{
    const struct stream_slots q = slots_of(sl);
    const unsigned ns = gs.n, rr = gs.sc.rr;
    int due = (uint64_t)max < left ? max : (int)left, n = k < due ? k : due;
    struct stream_burst sb;
    uint64_t b = 0;
    stream_burst_init(&sb, &q, first, (unsigned)n, ns, now, lens);
    /* Slot i is stream (rr + i) mod ns's, as the free run takes them. */
    for (unsigned j = 0, i = rr; j < ns; j++, i = i + 1 == ns ? 0 : i + 1) {
        struct gen_stream *g = &gs.s[i];
        uint64_t sent = stream_fast_frames(&g->fast, &q, &sb, j);
        g->packets += sent;
        g->bytes += sent * g->len;
        b += sent * g->len;
    }
    gs.sc.rr = (rr + (unsigned)n) % ns;
    *bytes = b;
    *dropped = drop ? due - n : 0;
    for (int i = 0; i < *dropped; i++)
        gen_streams_drop((unsigned)sched_pick(&gs.sc, now), now);
    return n;
}

int gen_streams_burst(struct vnet_txslots *sl, uint16_t first, int k, int max, uint64_t left,
                      bool drop, uint64_t now, uint16_t *lens, uint64_t *bytes, int *dropped)
{
    if (gs.fast)
        return gen_streams_fast(sl, first, k, max, left, drop, now, lens, bytes, dropped);
    const struct stream_slots q = slots_of(sl);
    uint32_t tsc_sum = pkt_sum_add_le64(0, now);
    int n = 0, nd = 0, i;
    uint64_t b = 0;
    while (n + nd < max && (uint64_t)(n + nd) < left && (i = sched_pick(&gs.sc, now)) >= 0) {
        if (n == k) {
            if (!drop)
                break;
            gen_streams_drop((unsigned)i, now);
            nd++;
            continue;
        }
        uint8_t *f = stream_slot(&q, (first + (unsigned)n) & q.mask, &gs.s[i].fast);
        uint16_t len = stream_write((unsigned)i, f, now, tsc_sum);
        lens[n++] = len;
        b += len;
    }
    *bytes = b;
    *dropped = nd;
    return n;
}

void gen_streams_drop(unsigned i, uint64_t now)
{
    struct gen_stream *g = &gs.s[i];
    uint16_t len = next_len(g, &gs.spec[i]);
    for (unsigned k = 0; k < gs.spec[i].nvars; k++)
        stream_fe_next(&g->fe[k], &g->rng);
    g->seq++;
    g->dropped++;
    sched_sent(&gs.sc, i, len, now);
}

void gen_streams_return(unsigned i, uint64_t seq, uint64_t ts, uint32_t len, uint64_t now)
{
    struct gen_stream *g = &gs.s[i];
    g->rx_packets++;
    g->rx_bytes += len;
    seq_record(&g->rx, seq);
    if (ts <= now)
        hist_add(&g->lat, now - ts);
    else
        g->rx_future++;
}

/* "rx": the stream's frames that came back, their latency. */
static void stream_rx_json(struct json *j, const struct gen_stream *g)
{
    static const double q[] = {0.5, 0.9, 0.99, 0.999};
    static const char *const name[] = {"p50_us", "p90_us", "p99_us", "p999_us"};
    json_obj_begin(j, "rx");
    json_u64(j, "packets", g->rx_packets);
    json_u64(j, "bytes", g->rx_bytes);
    json_u64(j, "lost", seq_lost(&g->rx));
    json_u64(j, "dup", g->rx.dup);
    json_u64(j, "reorder", g->rx.reorder);
    json_u64(j, "future_ts", g->rx_future);
    for (unsigned k = 0; k < sizeof(q) / sizeof(q[0]); k++)
        json_double(j, name[k], (double)app_cycles_ns(hist_quantile(&g->lat, q[k])) / 1e3);
    json_double(j, "max_us", (double)app_cycles_ns(g->lat.count ? g->lat.max : 0) / 1e3);
    json_obj_end(j);
}

uint64_t gen_streams_size_packets(unsigned i, unsigned k)
{
    const struct gen_stream *g = &gs.s[i];
    if (g->imix_seq)
        return g->size_packets[k];
    return k == 0 && !gs.spec[i].size_range ? g->packets : 0;
}

uint64_t gen_streams_next(void)
{
    return sched_next(&gs.sc);
}

bool gen_streams_done(void)
{
    return sched_done(&gs.sc);
}

void gen_streams_json(struct json *j, uint64_t ns)
{
    static const char *const modes[SMODE_MODES] = {"continuous", "burst", "multi_burst", "poisson"};
    json_arr_begin(j, "streams");
    for (unsigned i = 0; i < gs.n; i++) {
        const struct gen_stream *g = &gs.s[i];
        const struct rate *r = &gs.spec[i].rate;
        json_obj_begin(j, NULL);
        json_u64(j, "id", i);
        json_str(j, "mode", modes[gs.spec[i].mode]);
        json_u64(j, "packets", g->packets);
        json_u64(j, "bytes", g->bytes);
        json_u64(j, "dropped", g->dropped);
        json_u64(j, "next_seq", g->seq);
        json_double(j, "pps", app_per_s(g->packets + g->dropped, ns));
        json_double(j, "bps", app_per_s(g->bytes * 8, ns));
        if (r->unit != RATE_UNLIMITED) {
            json_str(j, "rate_unit", r->unit == RATE_PPS ? "pps" : "bps");
            json_u64(j, "rate_target", r->per_s);
        }
        if (g->rx_packets)
            stream_rx_json(j, g);
        json_obj_end(j);
    }
    json_arr_end(j);
}
