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
#include "apps/stream_size.h"
#include "kernel/exit.h"
#include "kernel/fwcfg.h"
#include "net/pkt.h"

#define GEN_STREAMS_FILE "opt/vnperf/streams"

/* A stream gen sends (the file's tx streams). */
struct gen_stream {
    struct stream_tmpl t;
    uint8_t *master;
    struct stream_fe fe[STREAM_VARS_MAX];
    struct stream_fast fast; /* the above as the fast path's loops take them */
    struct stream_size sz;
    uint64_t seq, rng;
    uint64_t packets, bytes, dropped;      /* gen_streams_fast's: see tx_packets */
    uint64_t size_packets[IMIX_MAX_SIZES]; /* a mix's, per size */
};

/* A stream's frames that reached gen, by the stream's id (its index in
 * the file): a tx stream's a reflector sent back, an rx stream's the host
 * peer sent. */
struct gen_rx {
    struct seq_stream seq;
    struct hist lat; /* TSC cycles; tx streams only: an rx stream's stamps are the host's TSC */
    uint64_t packets, bytes, future;
};

static struct {
    /* the tx streams in the file's order: spec[k] is stream id[k]'s */
    struct stream_spec spec[STREAMS_MAX];
    struct gen_stream s[STREAMS_MAX];
    struct stream_fast *loops[STREAMS_MAX]; /* &s[k].fast: stream_fast_burst's */
    uint8_t id[STREAMS_MAX];
    unsigned n;
    /* every stream of the file, by id */
    struct stream_spec all[STREAMS_MAX];
    struct gen_rx rx[STREAMS_MAX];
    unsigned nids;
    uint16_t copy;
    struct sched sc;
    bool fast;       /* every stream unpaced, continuous, one size: gen_streams_fast */
    uint16_t flen;   /* fast: the streams' one length when they share it, else 0 */
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
    if (stream_spec_parse(text, gs.all, &gs.nids, why, sizeof(why)) < 0)
        vn_fatal(VN_EXIT_CONFIG, "gen: %s", why);
    gs.n = 0;
    for (unsigned i = 0; i < gs.nids; i++) {
        if (gs.all[i].dir != SDIR_TX)
            continue;
        gs.id[gs.n] = (uint8_t)i;
        gs.spec[gs.n++] = gs.all[i];
    }
    return true;
}

void gen_streams_one(const struct stream_spec *s)
{
    gs.spec[0] = gs.all[0] = *s;
    gs.id[0] = 0;
    gs.n = gs.nids = 1;
}

unsigned gen_streams_ids(void)
{
    return gs.nids;
}

unsigned gen_streams_setup(const struct stream_addrs *d)
{
    /* Every template as long as the longest headers and stamp, so a slot
     * that held another stream's frame is overwritten in full. */
    gs.copy = 0;
    for (unsigned i = 0; i < gs.n; i++) {
        uint16_t c = (uint16_t)(stream_spec_hdr_len(&gs.spec[i]) + PL_LEN);
        gs.copy = c > gs.copy ? c : gs.copy;
    }
    for (unsigned i = 0; i < gs.n; i++) {
        const struct stream_spec *p = &gs.spec[i];
        struct gen_stream *g = &gs.s[i];
        uint16_t len = stream_size_max(p);
        uint32_t varies = 0;
        g->master = calloc(1, len > gs.copy ? len : gs.copy);
        if (!g->master)
            vn_fatal(VN_EXIT_OOM, "gen: no memory for stream %u's template", i);
        for (unsigned k = 0; k < p->nvars; k++)
            varies |= 1u << p->var[k].field;
        if (stream_tmpl_build(g->master, len, p, d, gs.id[i], varies, &g->t) < 0)
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
        gs.loops[i] = &g->fast;
        gs.maxlen = len > gs.maxlen ? len : gs.maxlen;
        if (stream_size_init(&g->sz, p) < 0)
            vn_fatal(VN_EXIT_OOM, "gen: no memory for stream %u's sizes", i);
    }
    for (unsigned i = 0; i < gs.nids; i++)
        hist_init(&gs.rx[i].lat);
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
    gs.flen = gs.s[0].sz.len;
    for (unsigned i = 1; i < gs.n; i++)
        gs.flen = gs.s[i].sz.len == gs.flen ? gs.flen : 0;
    return rc;
}

uint16_t gen_streams_maxlen(void)
{
    return gs.maxlen;
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
    uint16_t len = stream_size_next(&g->sz, p, g->t.size_varies);
    if (g->sz.seq)
        g->size_packets[g->sz.cls]++;
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

/* Stream g's frames sent and their bytes: gen_streams_fast counts none
 * per burst (every sequence number of its streams is a frame sent or
 * dropped, each of one length). */
static uint64_t tx_packets(const struct gen_stream *g)
{
    return gs.fast ? g->seq - g->dropped : g->packets;
}

static uint64_t tx_bytes(const struct gen_stream *g)
{
    return gs.fast ? tx_packets(g) * g->sz.len : g->bytes;
}

/* gen_streams_burst when every stream is unpaced, continuous and of one
 * size (the shorthand's case, and a file of such streams): every frame is
 * due and the streams take turns (the scheduler's free run), so the burst's
 * slots are the streams' in turn and each stream writes its own in a loop
 * of its own (stream_fast_burst): no scheduler per frame, the checksums
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
    stream_fast_burst(gs.loops, rr, &q, &sb);
    if (gs.flen)
        b = (uint64_t)n * gs.flen;
    for (unsigned j = 0, i = rr; !gs.flen && j < ns; j++, i = i + 1 == ns ? 0 : i + 1)
        b += (uint64_t)(sb.per + (j < sb.extra)) * gs.s[i].sz.len;
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
    uint16_t len = stream_size_next(&g->sz, &gs.spec[i], g->t.size_varies);
    for (unsigned k = 0; k < gs.spec[i].nvars; k++)
        stream_fe_next(&g->fe[k], &g->rng);
    g->seq++;
    g->dropped++;
    sched_sent(&gs.sc, i, len, now);
}

void gen_streams_return(unsigned id, uint64_t seq, uint64_t ts, uint32_t len, uint64_t now)
{
    struct gen_rx *g = &gs.rx[id];
    g->packets++;
    g->bytes += len;
    seq_record(&g->seq, seq);
    if (gs.all[id].dir != SDIR_TX)
        return; /* the host's TSC: no latency on the guest's clock */
    if (ts <= now)
        hist_add(&g->lat, now - ts);
    else
        g->future++;
}

/* "rx": the stream's frames that reached gen; the latency of a tx
 * stream's (they came back). */
static void stream_rx_json(struct json *j, unsigned id)
{
    static const double q[] = {0.5, 0.9, 0.99, 0.999};
    static const char *const name[] = {"p50_us", "p90_us", "p99_us", "p999_us"};
    const struct gen_rx *g = &gs.rx[id];
    json_obj_begin(j, "rx");
    json_u64(j, "packets", g->packets);
    json_u64(j, "bytes", g->bytes);
    json_u64(j, "lost", seq_lost(&g->seq));
    json_u64(j, "dup", g->seq.dup);
    json_u64(j, "reorder", g->seq.reorder);
    if (gs.all[id].dir == SDIR_TX) {
        json_u64(j, "future_ts", g->future);
        for (unsigned k = 0; k < sizeof(q) / sizeof(q[0]); k++)
            json_double(j, name[k], (double)app_cycles_ns(hist_quantile(&g->lat, q[k])) / 1e3);
        json_double(j, "max_us", (double)app_cycles_ns(g->lat.count ? g->lat.max : 0) / 1e3);
    }
    json_obj_end(j);
}

uint64_t gen_streams_size_packets(unsigned i, unsigned k)
{
    const struct gen_stream *g = &gs.s[i];
    if (g->sz.seq)
        return g->size_packets[k];
    return k == 0 && !gs.spec[i].size_range ? tx_packets(g) : 0;
}

uint64_t gen_streams_next(void)
{
    return sched_next(&gs.sc);
}

bool gen_streams_done(void)
{
    return sched_done(&gs.sc);
}

/* What gen sent of its k-th stream. */
static void stream_tx_json(struct json *j, unsigned k, uint64_t ns)
{
    const struct gen_stream *g = &gs.s[k];
    json_u64(j, "packets", tx_packets(g));
    json_u64(j, "bytes", tx_bytes(g));
    json_u64(j, "dropped", g->dropped);
    json_u64(j, "next_seq", g->seq);
    json_double(j, "pps", app_per_s(tx_packets(g) + g->dropped, ns));
    json_double(j, "bps", app_per_s(tx_bytes(g) * 8, ns));
}

void gen_streams_json(struct json *j, uint64_t ns)
{
    static const char *const modes[SMODE_MODES] = {"continuous", "burst", "multi_burst", "poisson"};
    json_arr_begin(j, "streams");
    for (unsigned i = 0, k = 0; i < gs.nids; i++) {
        const struct stream_spec *p = &gs.all[i];
        bool tx = p->dir == SDIR_TX;
        json_obj_begin(j, NULL);
        json_u64(j, "id", i);
        json_str(j, "direction", tx ? "tx" : "rx");
        json_str(j, "mode", modes[p->mode]);
        if (tx)
            stream_tx_json(j, k++, ns);
        if (p->rate.unit != RATE_UNLIMITED) {
            json_str(j, "rate_unit", p->rate.unit == RATE_PPS ? "pps" : "bps");
            json_u64(j, "rate_target", p->rate.per_s);
        }
        /* An rx stream's counts always: none is its whole loss. */
        if (gs.rx[i].packets || !tx)
            stream_rx_json(j, i);
        json_obj_end(j);
    }
    json_arr_end(j);
}
