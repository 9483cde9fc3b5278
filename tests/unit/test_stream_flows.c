/* apps/stream_flows.c and the stream engine's flow loop: the config
 * line's shorthand with flows= above one (stream_spec_one, its flow var
 * over flows_expand's flows) writes, frame for frame, what gen's own
 * builder wrote for it before it went through the engine: each flow's
 * frame from pkt_tmpl_build for that flow, patched with the flow's own
 * sequence number (pkt_set_flow, pkt_patch), the flows in flows_expand's
 * order (the source port fastest), byte for byte. Through the fast loop
 * (one size, unpaced: stream_fast_burst) across the ring's wrap, a pair's
 * share of the flows (its walk over them in its order, at random too),
 * the per-frame path (an IMIX), and uso='s frames (the device's
 * checksum: the stamp alone). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "apps/flows.h"
#include "apps/stream_fast.h"
#include "apps/stream_flows.h"
#include "apps/stream_size.h"
#include "net/pkt.h"

#define SLOTS  16
#define STRIDE 1600

static const struct stream_addrs addrs = {.smac = {2, 0, 0, 0, 0, 2},
                                          .dmac = {2, 0, 0, 0, 0, 1},
                                          .sip = 0x0a000002,
                                          .dip = 0x0a000001,
                                          .sport = 9000,
                                          .dport = 9001};

/* gen's flows for a flows= value, as gen_setup_flows expands them. */
static unsigned expand(const char *text, struct pkt_flow *out)
{
    struct flows_spec fs;
    char why[128];
    const struct pkt_flow base = {addrs.sip, addrs.dip, addrs.sport, addrs.dport, 0};
    assert_int_equal(flows_parse(text, &fs, why, sizeof(why)), 0);
    return flows_expand(&fs, &base, out);
}

/* The shorthand's stream of sizes m with the flow var (gen_streams_setup's
 * template: the flow fields at zero, id 0) into master and t. */
static void shorthand(const struct imix *m, uint8_t *master, struct stream_spec *s,
                      struct stream_tmpl *t)
{
    const struct rate r = {RATE_UNLIMITED, 0};
    stream_spec_one(m, &r, s);
    assert_int_equal(
        stream_tmpl_build(master, stream_size_max(s), s, &addrs, 0, STREAM_FLOW_FIELDS, t), 0);
}

/* What gen's builder wrote for flow fl's frame of len bytes, sequence
 * number seq, at tsc. */
static void before(uint8_t *g, uint16_t len, const struct pkt_flow *fl, uint64_t seq, uint64_t tsc)
{
    struct pkt_tmpl pt;
    assert_int_equal(pkt_tmpl_build(g, len, addrs.dmac, addrs.smac, fl, &pt), 0);
    pkt_set_flow(g, fl, &pt);
    pkt_patch(g, &pt, seq, tsc);
}

struct ring {
    uint8_t frames[SLOTS * STRIDE];
    uint16_t tag[SLOTS], lens[SLOTS];
    struct stream_slots q;
};

static void ring_init(struct ring *r, uint16_t clear, uint16_t copy)
{
    memset(r, 0xa5, sizeof(*r));
    memset(r->tag, 0, sizeof(r->tag));
    r->q = (struct stream_slots){.frame0 = r->frames,
                                 .tag = r->tag,
                                 .stride = STRIDE,
                                 .mask = SLOTS - 1,
                                 .clear = clear,
                                 .copy = copy};
}

/* The fast loop's bursts of sizes n[] over a one-size shorthand with the
 * flows of text, walked by w; each frame against gen's builder's for the
 * flow expect[] names, that flow's frames counted for its sequence. */
static void check_fast(const char *text, uint16_t len, struct stream_flow_walk *w,
                       const unsigned *expect, unsigned nexpect)
{
    static struct pkt_flow flows[FLOWS_MAX];
    static struct stream_flow sf[FLOWS_MAX];
    static uint8_t master[STRIDE], g[STRIDE];
    static struct ring r;
    static const unsigned bursts[] = {5, 11, 16, 3, 9};
    uint64_t seq = 0, rng = 1, per_flow[FLOWS_MAX] = {0};
    struct imix one = {.n = 1, .size = {len}, .weight = {1}, .cycle = 1};
    struct stream_spec s;
    struct stream_tmpl t;
    unsigned n = expand(text, flows);
    shorthand(&one, master, &s, &t);
    stream_flows_init(sf, flows, n, &t);
    struct stream_fast fs = {.t = &t,
                             .master = master,
                             .tag = 1,
                             .len = len,
                             .fe = NULL,
                             .seq = &seq,
                             .rng = &rng,
                             .flows = sf};
    stream_fast_init(&fs);
    ring_init(&r, STRIDE, t.copy);
    struct stream_fast *ss[1] = {&fs};
    unsigned first = 0, e = 0;
    for (unsigned b = 0; b < sizeof(bursts) / sizeof(bursts[0]); b++) {
        struct stream_burst sb;
        uint64_t now = 0x1234567890ull + b * 77777;
        stream_burst_init(&sb, &r.q, (uint16_t)first, bursts[b], 1, now, r.lens);
        sb.walk = w;
        stream_fast_burst(ss, 0, &r.q, &sb);
        for (unsigned i = 0; i < bursts[b]; i++, e++) {
            unsigned k = (first + i) & (SLOTS - 1), fi = expect[e % nexpect];
            before(g, len, &flows[fi], per_flow[fi]++, now);
            assert_int_equal(r.lens[i], len);
            assert_memory_equal(r.frames + (size_t)k * STRIDE, g, len);
        }
        first = (first + bursts[b]) & (SLOTS - 1);
    }
    assert_int_equal(seq, e);
    for (unsigned fi = 0; fi < n; fi++)
        assert_int_equal(sf[fi].seq, per_flow[fi]);
}

/* Every flow of one pair, in flows_expand's order: the source port
 * fastest, then the destination port; 64 and 60 bytes (the short stamp). */
static void test_fast_all_flows_in_order(void **st)
{
    (void)st;
    static uint16_t order[FLOWS_MAX];
    static const unsigned expect[] = {0, 1, 2, 3, 4, 5, 6, 7};
    static const uint16_t lens[] = {60, 64, 66, 1514};
    struct pkt_flow flows[8];
    assert_int_equal(expand("sport:1000-1003,dport:7-8", flows), 8);
    assert_int_equal(flows[1].sport, 1001);
    assert_int_equal(flows[4].dport, 8);
    assert_int_equal(flows[4].sport, 1000);
    for (unsigned i = 0; i < 8; i++)
        order[i] = (uint16_t)i;
    for (unsigned l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
        struct stream_flow_walk w;
        stream_flow_walk_init(&w, order, 8, false, 1);
        check_fast("sport:1000-1003,dport:7-8", lens[l], &w, expect, 8);
    }
}

/* A pair's share (gen orders the flows by pair): only its flows, in its
 * order, each numbering its own frames; addresses varying too. */
static void test_fast_pair_share(void **st)
{
    (void)st;
    static const uint16_t order[] = {1, 4, 6, 11};
    static const unsigned expect[] = {1, 4, 6, 11};
    struct stream_flow_walk w;
    stream_flow_walk_init(&w, order, 4, false, 1);
    check_fast("sip:10.0.0.10-10.0.0.12,dip:10.1.0.1-10.1.0.2,dport:5000-5001", 128, &w, expect, 4);
}

/* random: the flows drawn from the pair's share, each frame its flow's
 * (the draws replayed here with the same seed). */
static void test_fast_random(void **st)
{
    (void)st;
    static const uint16_t order[] = {0, 2, 3, 5, 7};
    static unsigned expect[64];
    struct stream_flow_walk w, ref;
    stream_flow_walk_init(&w, order, 5, true, 42);
    stream_flow_walk_init(&ref, order, 5, true, 42);
    for (unsigned i = 0; i < 44; i++) {
        expect[i] = stream_flow_walk_next(&ref);
        assert_true(expect[i] == 0 || expect[i] == 2 || expect[i] == 3 || expect[i] == 5 ||
                    expect[i] == 7);
    }
    check_fast("sport:1000-1007,random", 64, &w, expect, 44);
}

/* Each flow's checksum through every value, 0xffff (RFC 768's -0)
 * included: two flows' sequence numbers from across their words'
 * carries, 2 x 0x10000 frames in bursts of 16, each against gen's
 * builder's frame. */
static void test_fast_checksums_every_value(void **st)
{
    (void)st;
    static struct pkt_flow flows[2];
    static struct stream_flow sf[2];
    static uint8_t master[STRIDE], g[STRIDE];
    static struct ring r;
    static const uint16_t order[] = {0, 1};
    struct imix one = {.n = 1, .size = {64}, .weight = {1}, .cycle = 1};
    struct stream_spec s;
    struct stream_tmpl t;
    struct stream_flow_walk w;
    struct pkt_tmpl pt;
    uint64_t seq = 0, rng = 1, base[2] = {0xfffffffffff0ull, 0x1fffffff0000ull};
    unsigned seen_ffff = 0;
    assert_int_equal(expand("dport:7-8", flows), 2);
    shorthand(&one, master, &s, &t);
    stream_flows_init(sf, flows, 2, &t);
    sf[0].seq = base[0];
    sf[1].seq = base[1];
    stream_flow_walk_init(&w, order, 2, false, 1);
    struct stream_fast fs = {
        .t = &t, .master = master, .tag = 1, .len = 64, .seq = &seq, .rng = &rng, .flows = sf};
    stream_fast_init(&fs);
    ring_init(&r, STRIDE, t.copy);
    struct stream_fast *ss[1] = {&fs};
    for (unsigned b = 0; b < 2 * 0x10000 / 16; b++) {
        struct stream_burst sb;
        uint64_t now = 0xabcdef0123ull + b;
        stream_burst_init(&sb, &r.q, 0, 16, 1, now, r.lens);
        sb.walk = &w;
        stream_fast_burst(ss, 0, &r.q, &sb);
        for (unsigned i = 0; i < 16; i++) {
            const struct pkt_flow *fl = &flows[i & 1];
            uint8_t *f = r.frames + (size_t)i * STRIDE;
            assert_int_equal(pkt_tmpl_build(g, 64, addrs.dmac, addrs.smac, fl, &pt), 0);
            pkt_set_flow(g, fl, &pt);
            pkt_patch(g, &pt, base[i & 1] + b * 8 + i / 2, now);
            assert_memory_equal(f, g, 64);
            seen_ffff += rd16(f + OFF_UDP_CSUM) == 0xffff;
        }
    }
    assert_true(seen_ffff >= 2);
}

/* The per-frame path (rate=, an IMIX: gen_streams.c's stream_write): the
 * flow's fields and sums on top of the template's, its sequence number,
 * each size's lengths: gen's builder's frame of that flow and size. */
static void test_per_frame_imix(void **st)
{
    (void)st;
    static struct pkt_flow flows[FLOWS_MAX];
    static struct stream_flow sf[FLOWS_MAX];
    static uint8_t master[1514], f[1514], g[1514];
    static uint16_t order[6] = {0, 1, 2, 3, 4, 5};
    struct imix mix = {.n = 3, .size = {60, 590, 1514}, .weight = {7, 4, 1}, .cycle = 12};
    struct stream_spec s;
    struct stream_tmpl t;
    struct stream_flow_walk w;
    unsigned n = expand("sport:1000-1002,dip:10.0.0.1-10.0.0.2", flows);
    assert_int_equal(n, 6);
    shorthand(&mix, master, &s, &t);
    stream_flows_init(sf, flows, n, &t);
    stream_flow_walk_init(&w, order, 6, false, 1);
    uint64_t per_flow[6] = {0};
    for (unsigned i = 0; i < 40; i++) {
        uint16_t len = mix.size[i % 3];
        uint64_t now = 1000 + i;
        memcpy(f, master, sizeof(f));
        uint32_t udp = t.udp_base + pkt_sum_add_le64(0, now), ip = t.ip_base;
        struct stream_flow *fl = &sf[stream_flow_walk_next(&w)];
        stream_flow_apply(fl, f, &t, &udp, &ip);
        stream_frame_finish_sum(f, &t, len, udp, ip, fl->seq++, now);
        before(g, len, &flows[i % 6], per_flow[i % 6]++, now);
        assert_memory_equal(f, g, len);
    }
}

/* uso=: the template's checksum field the driver's seed, each frame the
 * stamp alone (gen's builder: pkt_patch_stamp), fast and per frame. */
static void test_l4_dev_stamp_only(void **st)
{
    (void)st;
    static uint8_t master[STRIDE], g[STRIDE], f[STRIDE];
    static struct ring r;
    const uint16_t len = 1400;
    const struct pkt_flow fl = {addrs.sip, addrs.dip, addrs.sport, addrs.dport, 0};
    struct imix one = {.n = 1, .size = {len}, .weight = {1}, .cycle = 1};
    const struct rate rt = {RATE_UNLIMITED, 0};
    struct stream_spec s;
    struct stream_tmpl t;
    struct pkt_tmpl pt;
    uint64_t seq = 0, rng = 1;
    stream_spec_one(&one, &rt, &s);
    assert_int_equal(stream_tmpl_build(master, len, &s, &addrs, 0, 0, &t), 0);
    stream_tmpl_l4_dev(&t);
    wr16(master + t.l4 + 6, 0x4321); /* the driver's seed */
    struct stream_fast fs = {
        .t = &t, .master = master, .tag = 1, .len = len, .seq = &seq, .rng = &rng};
    stream_fast_init(&fs);
    ring_init(&r, STRIDE, t.copy);
    struct stream_fast *ss[1] = {&fs};
    struct stream_burst sb;
    stream_burst_init(&sb, &r.q, 14, 6, 1, 555, r.lens);
    stream_fast_burst(ss, 0, &r.q, &sb);
    assert_int_equal(pkt_tmpl_build(g, len, addrs.dmac, addrs.smac, &fl, &pt), 0);
    wr16(g + OFF_UDP_CSUM, 0x4321);
    for (unsigned i = 0; i < 6; i++) {
        pkt_patch_stamp(g, i, 555);
        assert_memory_equal(r.frames + (size_t)((14 + i) & (SLOTS - 1)) * STRIDE, g, len);
    }
    assert_int_equal(seq, 6);
    memcpy(f, master, len);
    stream_frame_finish_sum(f, &t, len, t.udp_base, t.ip_base, 6, 777);
    pkt_patch_stamp(g, 6, 777);
    assert_memory_equal(f, g, len);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_all_flows_in_order),
        cmocka_unit_test(test_fast_pair_share),
        cmocka_unit_test(test_fast_random),
        cmocka_unit_test(test_fast_checksums_every_value),
        cmocka_unit_test(test_per_frame_imix),
        cmocka_unit_test(test_l4_dev_stamp_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
