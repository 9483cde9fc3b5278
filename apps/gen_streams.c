#include "apps/gen_streams.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/apps_common.h"
#include "apps/hist.h"
#include "apps/seqtrack.h"
#include "apps/stream_fast.h"
#include "apps/stream_flows.h"
#include "apps/stream_sched.h"
#include "apps/stream_size.h"
#include "kernel/exit.h"
#include "kernel/fwcfg.h"
#include "kernel/smp.h"
#include "net/pkt.h"

#define GEN_STREAMS_FILE "opt/vnperf/streams"

/* A stream gen sends (the file's tx streams, or the shorthand's). */
struct gen_stream {
    struct stream_tmpl t;
    uint8_t *master;
    struct stream_fe fe[STREAM_VARS_MAX];
    struct stream_fast fast; /* the above as the fast path's loops take them */
    struct stream_size sz;
    uint64_t seq, rng;
    uint64_t packets, bytes, dropped;      /* gen_streams_fast's: see tx_packets */
    uint64_t size_packets[IMIX_MAX_SIZES]; /* a mix's, per size */
    struct stream_flow *flows;             /* the flow var's values (every CPU's), or NULL */
};

/* What one CPU sends: CPU 0 the file's tx streams or the shorthand's
 * stream; with the shorthand's flows on several CPUs (vcpus=, docs/apps.md)
 * each of them its own copy of that stream at its share of rate=, over
 * its own pairs' flows (a flow is one pair's, so its sequence number is
 * one CPU's). Written by its CPU only. */
struct gen_tx {
    const struct stream_spec *spec; /* spec[k] is s[k]'s */
    struct stream_spec share;       /* the shorthand's stream at this CPU's rate */
    struct gen_stream s[STREAMS_MAX];
    struct stream_fast *loops[STREAMS_MAX]; /* &s[k].fast: stream_fast_burst's */
    unsigned n;
    struct sched sc;
    bool fast;     /* every stream unpaced, continuous, one size: gen_streams_fast */
    uint16_t flen; /* fast: the streams' one length when they share it, else 0 */
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
    struct gen_tx tx[SMP_MAX_CPUS];
    uint8_t id[STREAMS_MAX];
    unsigned n, ncpu; /* the tx streams; the CPUs sending them */
    /* every stream of the file, by id */
    struct stream_spec all[STREAMS_MAX];
    struct gen_rx rx[STREAMS_MAX];
    unsigned nids;
    uint16_t copy;
    uint16_t maxlen;              /* of every stream's frames */
    const struct pkt_flow *flows; /* the shorthand's flows=, nflows of them (one: no flow var) */
    unsigned nflows;
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

void gen_streams_one(const struct stream_spec *s, const struct pkt_flow *flows, unsigned n)
{
    gs.spec[0] = gs.all[0] = *s;
    gs.id[0] = 0;
    gs.n = gs.nids = 1;
    gs.flows = flows;
    gs.nflows = n;
}

unsigned gen_streams_ids(void)
{
    return gs.nids;
}

/* Stream i's loop as stream_fast takes it, pointing into g. */
static void stream_loop(struct gen_tx *x, unsigned i)
{
    struct gen_stream *g = &x->s[i];
    g->fast = (struct stream_fast){.t = &g->t,
                                   .master = g->master,
                                   .tag = (uint16_t)(i + 1),
                                   .len = g->t.len,
                                   .nvars = x->spec[i].nvars,
                                   .fe = g->fe,
                                   .seq = &g->seq,
                                   .rng = &g->rng,
                                   .flows = g->flows};
    stream_fast_init(&g->fast);
    x->loops[i] = &g->fast;
}

/* The shorthand's flows as its flow var's values, for template t. */
static struct stream_flow *stream_flows(const struct stream_tmpl *t)
{
    if (gs.nflows < 2)
        return NULL;
    struct stream_flow *f = calloc(gs.nflows, sizeof(*f));
    if (!f)
        vn_fatal(VN_EXIT_OOM, "gen: no memory for %u flows", gs.nflows);
    stream_flows_init(f, gs.flows, gs.nflows, t);
    return f;
}

unsigned gen_streams_setup(const struct stream_addrs *d)
{
    struct gen_tx *x = &gs.tx[0];
    /* Every template as long as the longest headers and stamp, so a slot
     * that held another stream's frame is overwritten in full. */
    gs.copy = 0;
    for (unsigned i = 0; i < gs.n; i++) {
        uint16_t c = (uint16_t)(stream_spec_hdr_len(&gs.spec[i]) + PL_LEN);
        gs.copy = c > gs.copy ? c : gs.copy;
    }
    x->spec = gs.spec;
    x->n = gs.n;
    gs.ncpu = 1;
    for (unsigned i = 0; i < gs.n; i++) {
        const struct stream_spec *p = &gs.spec[i];
        struct gen_stream *g = &x->s[i];
        uint16_t len = stream_size_max(p);
        /* The flow var writes the addresses, the ports and the stream id. */
        uint32_t varies = gs.nflows < 2 ? 0 : STREAM_FLOW_FIELDS;
        g->master = calloc(1, len > gs.copy ? len : gs.copy);
        if (!g->master)
            vn_fatal(VN_EXIT_OOM, "gen: no memory for stream %u's template", i);
        for (unsigned k = 0; k < p->nvars; k++)
            varies |= 1u << p->var[k].field;
        if (stream_tmpl_build(g->master, len, p, d, gs.nflows < 2 ? gs.id[i] : 0, varies, &g->t) <
            0)
            vn_fatal(VN_EXIT_CONFIG, "gen: stream %u: no frame of %u bytes holds its headers", i,
                     len);
        for (unsigned k = 0; k < p->nvars; k++)
            stream_fe_init(&g->fe[k], &p->var[k], &g->t);
        g->flows = stream_flows(&g->t);
        stream_loop(x, i);
        gs.maxlen = len > gs.maxlen ? len : gs.maxlen;
        if (stream_size_init(&g->sz, p) < 0)
            vn_fatal(VN_EXIT_OOM, "gen: no memory for stream %u's sizes", i);
    }
    for (unsigned i = 0; i < gs.nids; i++)
        hist_init(&gs.rx[i].lat);
    return gs.n;
}

uint8_t *gen_streams_l4_dev(uint16_t *len)
{
    struct gen_stream *g = &gs.tx[0].s[0];
    stream_tmpl_l4_dev(&g->t);
    stream_loop(&gs.tx[0], 0);
    *len = g->t.len;
    return g->master;
}

void gen_streams_share(unsigned cpu, const struct rate *r)
{
    struct gen_tx *x = &gs.tx[cpu];
    if (cpu) {
        /* CPU 0's stream, its template and flow table shared (read, and
         * each flow's sequence number its pair's CPU's), its walks and
         * counts its own. */
        x->s[0] = gs.tx[0].s[0];
        struct gen_stream *g = &x->s[0];
        g->seq = g->packets = g->bytes = g->dropped = 0;
        memset(g->size_packets, 0, sizeof(g->size_packets));
        g->sz.pos = 0;
    }
    x->share = gs.spec[0];
    x->share.rate = *r;
    x->spec = &x->share;
    x->n = 1;
    stream_loop(x, 0);
    gs.ncpu = cpu + 1 > gs.ncpu ? cpu + 1 : gs.ncpu;
}

int gen_streams_start(unsigned cpu, uint64_t tsc_hz, uint64_t seed, uint64_t now)
{
    struct gen_tx *x = &gs.tx[cpu];
    for (unsigned i = 0; i < x->n; i++)
        x->s[i].rng = (seed + cpu * STREAMS_MAX + i) * 0x9e3779b97f4a7c15ull + 7;
    int rc = sched_init(&x->sc, x->spec, x->n, tsc_hz, now, seed + cpu);
    x->fast = rc == 0 && x->sc.free_run;
    for (unsigned i = 0; i < x->n; i++)
        x->fast = x->fast && !x->s[i].t.size_varies;
    x->flen = x->s[0].sz.len;
    for (unsigned i = 1; i < x->n; i++)
        x->flen = x->s[i].sz.len == x->flen ? x->flen : 0;
    return rc;
}

uint16_t gen_streams_maxlen(void)
{
    return gs.maxlen;
}

/* Stream i's frame (x's) in f (its template there), tsc_sum the
 * timestamp's share of the UDP sum, w the pair's flows; its length. */
static inline uint16_t stream_write(struct gen_tx *x, unsigned i, struct stream_flow_walk *w,
                                    uint8_t *f, uint64_t now, uint32_t tsc_sum)
{
    struct gen_stream *g = &x->s[i];
    const struct stream_spec *p = &x->spec[i];
    uint32_t udp = g->t.udp_base + tsc_sum, ip = g->t.ip_base;
    uint64_t seq = g->seq++;
    for (unsigned k = 0; k < p->nvars; k++)
        stream_fe_apply(&g->fe[k], f, &g->t, &g->rng, &udp, &ip);
    if (g->flows) {
        struct stream_flow *fl = &g->flows[stream_flow_walk_next(w)];
        stream_flow_apply(fl, f, &g->t, &udp, &ip);
        seq = fl->seq++;
    }
    uint16_t len = stream_size_next(&g->sz, p, g->t.size_varies);
    if (g->sz.seq)
        g->size_packets[g->sz.cls]++;
    stream_frame_finish_sum(f, &g->t, len, udp, ip, seq, now);
    sched_sent(&x->sc, i, len, now);
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
 * per burst (every frame of its streams took a sequence number of the
 * stream's, sent or dropped, each of one length). */
static uint64_t tx_packets(const struct gen_tx *x, const struct gen_stream *g)
{
    return x->fast ? g->seq - g->dropped : g->packets;
}

static uint64_t tx_bytes(const struct gen_tx *x, const struct gen_stream *g)
{
    return x->fast ? tx_packets(x, g) * g->sz.len : g->bytes;
}

/* A frame of x's stream i the ring had no room for (txfull=drop): it
 * takes its sequence number (its flow's), its sizes and values walk on. */
static void stream_drop(struct gen_tx *x, unsigned i, struct stream_flow_walk *w, uint64_t now)
{
    struct gen_stream *g = &x->s[i];
    uint16_t len = stream_size_next(&g->sz, &x->spec[i], g->t.size_varies);
    for (unsigned k = 0; k < x->spec[i].nvars; k++)
        stream_fe_next(&g->fe[k], &g->rng);
    if (g->flows)
        g->flows[stream_flow_walk_next(w)].seq++;
    g->seq++;
    g->dropped++;
    sched_sent(&x->sc, i, len, now);
}

/* gen_streams_burst when every stream is unpaced, continuous and of one
 * size (the shorthand's case, and a file of such streams): every frame is
 * due and the streams take turns (the scheduler's free run), so the burst's
 * slots are the streams' in turn and each stream writes its own in a loop
 * of its own (stream_fast_burst): no scheduler per frame, the checksums
 * carried from frame to frame. */
static int gen_streams_fast(struct gen_tx *x, struct stream_flow_walk *w, struct vnet_txslots *sl,
                            uint16_t first, int k, int max, uint64_t left, bool drop, uint64_t now,
                            uint16_t *lens, uint64_t *bytes, int *dropped)
{
    const struct stream_slots q = slots_of(sl);
    const unsigned ns = x->n, rr = x->sc.rr;
    int due = (uint64_t)max < left ? max : (int)left, n = k < due ? k : due;
    struct stream_burst sb;
    uint64_t b = 0;
    stream_burst_init(&sb, &q, first, (unsigned)n, ns, now, lens);
    sb.walk = w;
    /* Slot i is stream (rr + i) mod ns's, as the free run takes them. */
    stream_fast_burst(x->loops, rr, &q, &sb);
    if (x->flen)
        b = (uint64_t)n * x->flen;
    for (unsigned j = 0, i = rr; !x->flen && j < ns; j++, i = i + 1 == ns ? 0 : i + 1)
        b += (uint64_t)(sb.per + (j < sb.extra)) * x->s[i].sz.len;
    x->sc.rr = (rr + (unsigned)n) % ns;
    *bytes = b;
    *dropped = drop ? due - n : 0;
    for (int i = 0; i < *dropped; i++)
        stream_drop(x, (unsigned)sched_pick(&x->sc, now), w, now);
    return n;
}

int gen_streams_burst(unsigned cpu, struct stream_flow_walk *w, struct vnet_txslots *sl,
                      uint16_t first, int k, int max, uint64_t left, bool drop, uint64_t now,
                      uint16_t *lens, uint64_t *bytes, int *dropped)
{
    struct gen_tx *x = &gs.tx[cpu];
    if (x->fast)
        return gen_streams_fast(x, w, sl, first, k, max, left, drop, now, lens, bytes, dropped);
    const struct stream_slots q = slots_of(sl);
    uint32_t tsc_sum = pkt_sum_add_le64(0, now);
    int n = 0, nd = 0, i;
    uint64_t b = 0;
    while (n + nd < max && (uint64_t)(n + nd) < left && (i = sched_pick(&x->sc, now)) >= 0) {
        if (n == k) {
            if (!drop)
                break;
            stream_drop(x, (unsigned)i, w, now);
            nd++;
            continue;
        }
        uint8_t *f = stream_slot(&q, (first + (unsigned)n) & q.mask, &x->s[i].fast);
        uint16_t len = stream_write(x, (unsigned)i, w, f, now, tsc_sum);
        lens[n++] = len;
        b += len;
    }
    *bytes = b;
    *dropped = nd;
    return n;
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
    uint64_t n = 0;
    for (unsigned c = 0; c < gs.ncpu; c++) {
        const struct gen_tx *x = &gs.tx[c];
        const struct gen_stream *g = &x->s[i];
        if (i >= x->n)
            continue;
        if (g->sz.seq)
            n += g->size_packets[k];
        else if (k == 0 && !gs.spec[i].size_range)
            n += tx_packets(x, g);
    }
    return n;
}

uint64_t gen_streams_next(unsigned cpu)
{
    return sched_next(&gs.tx[cpu].sc);
}

bool gen_streams_done(unsigned cpu)
{
    return sched_done(&gs.tx[cpu].sc);
}

/* What gen sent of its k-th stream: every CPU's. */
static void stream_tx_json(struct json *j, unsigned k, uint64_t ns)
{
    uint64_t packets = 0, bytes = 0, dropped = 0, seq = 0;
    for (unsigned c = 0; c < gs.ncpu; c++) {
        const struct gen_tx *x = &gs.tx[c];
        const struct gen_stream *g = &x->s[k];
        if (k >= x->n)
            continue;
        packets += tx_packets(x, g);
        bytes += tx_bytes(x, g);
        dropped += g->dropped;
        seq += g->seq;
    }
    json_u64(j, "packets", packets);
    json_u64(j, "bytes", bytes);
    json_u64(j, "dropped", dropped);
    json_u64(j, "next_seq", seq);
    json_double(j, "pps", app_per_s(packets + dropped, ns));
    json_double(j, "bps", app_per_s(bytes * 8, ns));
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
