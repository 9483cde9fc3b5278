/* apps/stream_sum.h and apps/stream_fast.c: the sums modulo 0xffff
 * against a sum of every word, and the frames the loops write into a ring
 * of slots, with their checksums carried from frame to frame, byte for
 * byte against the per-frame path (stream_fe_apply and
 * stream_frame_finish, which sum every frame afresh) and against a
 * checksum this file computes over each frame's words: no var, a walk of
 * each width and direction across its wrap, random and several vars;
 * several streams sharing the slots, slots the driver wrote, frames
 * dropped between bursts, the ring's wrap, sequence numbers across their
 * words' carries and checksums through every value (0 and 0xffff
 * included). */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "apps/stream_fast.h"
#include "apps/stream_sum.h"
#include "net/pkt.h"
#include "ref_csum.h"

#define SLOTS  16
#define STRIDE 256
#define NS_MAX 4

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

/* x modulo 0xffff by its words: RFC 1071's fold, 0xffff read as 0. */
static uint32_t ref_mod(uint64_t x)
{
    uint32_t f = ref_fold(x);
    return f == 0xffff ? 0 : f;
}

/* sum_mod, sum_add, sum_neg, sum_swap and sum_add16 against the words'
 * sums of random values, and the identity the carried checksums rest on:
 * a value's words add up to it modulo 0xffff, whatever its width. */
static void test_sum_arith(void **st)
{
    (void)st;
    static const uint64_t edge[] = {0, 1, 0xfffe, 0xffff, 0x10000, 0xfffeffff, UINT64_MAX};
    for (unsigned i = 0; i < 200000; i++) {
        uint64_t x = i < sizeof(edge) / sizeof(edge[0]) ? edge[i] : rnd() >> (rnd() & 63);
        uint32_t a = ref_mod(rnd()), b = ref_mod(x);
        assert_int_equal(sum_mod(x), ref_mod(x));
        assert_int_equal(sum_mod(x), x % 0xffff);
        assert_int_equal(sum_add(a, b), ref_mod((uint64_t)a + b));
        assert_int_equal(sum_add(a, sum_neg(a)), 0);
        assert_int_equal(sum_swap(a), ref_mod((uint64_t)a * 256));
        /* A little-endian u64's words, as the stamp's: its value. */
        assert_int_equal(ref_mod(pkt_sum_add_le64(0, x)), sum_swap(sum_mod(x)));
        uint16_t c = (uint16_t)(a ? a : 0xffff);
        uint16_t d = (uint16_t)rnd();
        uint16_t s = sum_add16(c, d);
        assert_int_not_equal(s, 0);
        assert_int_equal(ref_mod(s), ref_mod((uint64_t)c + d));
    }
    assert_int_equal(sum_add16(0, 0), 0);
    assert_int_equal(sum_add16(0xffff, 0xffff), 0xffff);
    assert_int_equal(sum_add16(0xfffe, 1), 0xffff);
}

static const struct stream_addrs addrs = {
    {2, 0, 0, 0, 0, 2}, {2, 0, 0, 0, 0, 1}, 0x0a000002, 0x0a000001, 9000, 9001};

/* One stream as the loops take it and as the per-frame path does: its
 * template, its fast state, and the reference walk beside it. */
struct tstream {
    struct stream_spec spec;
    struct stream_tmpl t;
    uint8_t master[STRIDE];
    struct stream_fe fe[STREAM_VARS_MAX], ref_fe[STREAM_VARS_MAX];
    uint64_t seq, rng, ref_seq, ref_rng;
    struct stream_fast fast;
};

static void tstream_init(struct tstream *s, unsigned id, uint64_t seq)
{
    const struct stream_spec *p = &s->spec;
    uint32_t varies = 0;
    uint16_t len = p->sizes.size[0];
    for (unsigned k = 0; k < p->nvars; k++)
        varies |= 1u << p->var[k].field;
    memset(s->master, 0, sizeof(s->master));
    assert_int_equal(stream_tmpl_build(s->master, len, p, &addrs, id, varies, &s->t), 0);
    for (unsigned k = 0; k < p->nvars; k++) {
        stream_fe_init(&s->fe[k], &p->var[k], &s->t);
        stream_fe_init(&s->ref_fe[k], &p->var[k], &s->t);
    }
    s->seq = s->ref_seq = seq;
    s->rng = s->ref_rng = 0x1234567 + id;
    s->fast = (struct stream_fast){.t = &s->t,
                                   .master = s->master,
                                   .tag = (uint16_t)(id + 1),
                                   .len = len,
                                   .nvars = p->nvars,
                                   .fe = s->fe,
                                   .seq = &s->seq,
                                   .rng = &s->rng};
    stream_fast_init(&s->fast);
}

/* The frame the per-frame path writes for s's next frame at now. */
static void ref_frame(struct tstream *s, uint8_t *f, uint64_t now)
{
    uint16_t len = s->spec.sizes.size[0];
    memcpy(f, s->master, len);
    uint32_t udp = s->t.udp_base, ip = s->t.ip_base;
    for (unsigned k = 0; k < s->spec.nvars; k++)
        stream_fe_apply(&s->ref_fe[k], f, &s->t, &s->ref_rng, &udp, &ip);
    stream_frame_finish(f, &s->t, len, udp, ip, s->ref_seq++, now);
}

/* The frame's checksums over its words, computed here. */
static void check_sums(const uint8_t *f, const struct stream_tmpl *t, uint16_t len)
{
    if (t->proto != SPROTO_UDP) {
        assert_true(ref_l4_ok(f, t->l3, t->ip == 6, len));
        if (t->ip == 4)
            assert_int_equal(ref_fold(ref_sum(f + t->l3, IP4_HLEN, 0)), 0xffff);
        return;
    }
    uint64_t s = t->ip == 6 ? ref_sum(f + t->l3 + 8, 32, 0) : ref_sum(f + t->l3 + 12, 8, 0);
    s += 17 + (uint32_t)(len - t->l4);
    assert_int_equal(ref_fold(ref_sum(f + t->l4, len - t->l4, s)), 0xffff);
    assert_int_not_equal(ref_be16(f + t->l4 + 6), 0);
    if (t->ip == 4)
        assert_int_equal(ref_fold(ref_sum(f + t->l3, IP4_HLEN, 0)), 0xffff);
}

/* Burst b's frames of the ns streams from ts[rr] on: each stream's by
 * its own call (stream_fast_frames), or, whole, the burst's by one
 * (stream_fast_burst, as gen_streams_fast sends them). */
static void write_burst(struct tstream *ts, unsigned ns, unsigned rr, const struct stream_slots *q,
                        const struct stream_burst *b, bool whole)
{
    unsigned got = 0;
    if (whole) {
        struct stream_fast *ss[NS_MAX];
        for (unsigned j = 0; j < ns; j++)
            ss[j] = &ts[j].fast;
        stream_fast_burst(ss, rr, q, b);
        return;
    }
    for (unsigned j = 0; j < ns; j++) {
        unsigned sent = stream_fast_frames(&ts[(rr + j) % ns].fast, q, b, j);
        assert_int_equal(sent, (b->n - j + ns - 1) / ns);
        got += sent;
    }
    assert_int_equal(got, b->n);
}

/* ns streams in turn over the slots, bursts of random sizes from random
 * starts, until each stream sent frames frames, each burst's timestamp
 * random (or now throughout, when not 0: a stream's checksums then walk
 * through every value), each burst written as write_burst's whole says;
 * every frame against the per-frame path's and its own sums. */
static void run_streams_as(struct tstream *ts, unsigned ns, unsigned frames, uint64_t now,
                           bool whole)
{
    static uint8_t ring[SLOTS * STRIDE], want[STRIDE];
    static uint16_t tags[SLOTS], lens[SLOTS];
    uint16_t copy = 0, maxlen = 0;
    for (unsigned j = 0; j < ns; j++) {
        uint16_t c = ts[j].t.pl + PL_LEN, l = ts[j].spec.sizes.size[0];
        copy = c > copy ? c : copy;
        maxlen = l > maxlen ? l : maxlen;
    }
    memset(ring, 0xa5, sizeof(ring)); /* tag 0: what the driver left */
    memset(tags, 0, sizeof(tags));
    const struct stream_slots q = {ring, tags, STRIDE, SLOTS - 1, maxlen, copy};
    unsigned rr = 0;
    uint16_t first = (uint16_t)(rnd() % SLOTS);
    const bool same_now = now != 0;
    for (unsigned done = 0; done < frames * ns;) {
        unsigned n = 1 + (unsigned)(rnd() % SLOTS);
        if (!same_now)
            now = rnd() & (rnd() & 1 ? UINT64_MAX : 0xffffffffffull);
        if (rnd() % 16 == 0) { /* the driver copies a frame of its own into a slot */
            unsigned k = (unsigned)(rnd() % SLOTS);
            memset(ring + k * STRIDE, 0x5a, STRIDE);
            tags[k] = 0;
        }
        if (rnd() % 8 == 0) { /* a frame dropped (txfull=drop): the walk moves on without it */
            struct tstream *s = &ts[rnd() % ns];
            for (unsigned k = 0; k < s->spec.nvars; k++) {
                stream_fe_next(&s->fe[k], &s->rng);
                stream_fe_next(&s->ref_fe[k], &s->ref_rng);
            }
            s->seq++;
            s->ref_seq++;
        }
        struct stream_burst b;
        stream_burst_init(&b, &q, first, n, ns, now, lens);
        write_burst(ts, ns, rr, &q, &b, whole);
        for (unsigned i = 0; i < n; i++) {
            struct tstream *s = &ts[(rr + i) % ns];
            unsigned k = (first + i) % SLOTS;
            const uint8_t *f = ring + k * STRIDE;
            uint16_t len = s->spec.sizes.size[0];
            ref_frame(s, want, now);
            assert_int_equal(lens[i], len);
            assert_int_equal(tags[k], s->fast.tag);
            assert_memory_equal(f, want, len);
            check_sums(f, &s->t, len);
        }
        for (unsigned j = 0; j < ns; j++) {
            assert_int_equal(ts[j].seq, ts[j].ref_seq);
            for (unsigned k = 0; k < ts[j].spec.nvars; k++)
                assert_int_equal(ts[j].fe[k].cur, ts[j].ref_fe[k].cur);
        }
        rr = (rr + n) % ns;
        first = (uint16_t)((first + n) % SLOTS);
        done += n;
    }
}

/* Each stream's loop called on its own, as the streams' tests below. */
static void run_streams(struct tstream *ts, unsigned ns, unsigned frames, uint64_t now)
{
    run_streams_as(ts, ns, frames, now, false);
}

static void spec_udp(struct stream_spec *s, uint8_t ip, uint16_t size)
{
    memset(s, 0, sizeof(*s));
    s->ip = ip;
    s->ttl = 64;
    s->tos = 0x10;
    s->sizes = (struct imix){.n = 1, .size = {size}, .weight = {1}, .cycle = 1};
    for (unsigned i = 0; i < 16; i++) {
        s->sip6[i] = (uint8_t)(0xfd + i);
        s->dip6[i] = (uint8_t)(0x20 + 3 * i);
    }
}

static void one_var(struct stream_spec *s, enum stream_field f, enum stream_op op, uint64_t lo,
                    uint64_t hi, uint64_t step)
{
    s->var[s->nvars++] = (struct stream_var){(uint8_t)f, (uint8_t)op, lo, hi, step};
}

/* One stream, no var: the shorthand's. 70000 frames: the checksum takes
 * every value, 0xffff (a sum of 0) among them; the sequence numbers cross
 * the carry out of their low 48 bits. */
static void test_no_var(void **st)
{
    (void)st;
    struct tstream s;
    spec_udp(&s.spec, 4, 64);
    tstream_init(&s, 0, 0xfffffffffff0ull);
    run_streams(&s, 1, 70000, 0x123456789ull);
    spec_udp(&s.spec, 4, 60); /* the short stamp */
    tstream_init(&s, 0, 0);
    run_streams(&s, 1, 3000, 0);
}

/* A burst that starts on a frame whose sum is 0 (which the fold leaves
 * as 0xffff): its UDP checksum 0xffff (RFC 768), its IPv4 header's 0. The
 * frames found with the per-frame path. */
static void test_zero_sums_at_start(void **st)
{
    (void)st;
    const uint64_t now = 0x123456789ull;
    static uint8_t f[STRIDE];
    struct tstream s;
    spec_udp(&s.spec, 4, 64);
    tstream_init(&s, 0, 0);
    while (ref_frame(&s, f, now), ref_be16(f + s.t.l4 + 6) != 0xffff)
        assert_true(s.ref_seq < 0x10000);
    tstream_init(&s, 0, s.ref_seq - 1);
    run_streams(&s, 1, 1, now);
    spec_udp(&s.spec, 4, 64);
    one_var(&s.spec, SF_SRC_IP, SOP_INC, 0x0a000000, 0x0a00ffff, 1);
    tstream_init(&s, 0, 0);
    while (ref_frame(&s, f, now), ref_be16(f + s.t.l3 + 10) != 0)
        assert_true(s.ref_seq < 0x10000);
    s.spec.var[0].lo += s.ref_seq - 1;
    tstream_init(&s, 0, 0);
    run_streams(&s, 1, 1, now);
}

/* One var that walks: ports and tags (2 bytes), IPv4 addresses (in the
 * header's sum too) and IPv6 ones (4 bytes), up and down, ranges that
 * wrap every few frames, by steps that do not divide them, and the full
 * range of an address. */
static void test_walks(void **st)
{
    (void)st;
    static const struct {
        uint8_t ip, field, op, nvlan;
        uint64_t lo, hi, step;
    } w[] = {
        {4, SF_SRC_PORT, SOP_INC, 0, 1024, 65535, 1},
        {4, SF_DST_PORT, SOP_DEC, 0, 0, 65535, 7},
        {4, SF_SRC_PORT, SOP_INC, 0, 65530, 65535, 4},
        {4, SF_DST_PORT, SOP_INC, 0, 5, 5, 1},
        {4, SF_VLAN, SOP_INC, 1, 1, 4094, 5},
        {4, SF_OUTER_VLAN, SOP_DEC, 2, 1, 10, 3},
        {4, SF_SRC_IP, SOP_INC, 0, 0x0a000000, 0x0a0100ff, 1},
        {4, SF_DST_IP, SOP_DEC, 0, 0xfffffff0, 0xffffffff, 3},
        {4, SF_SRC_IP, SOP_DEC, 0, 0, UINT32_MAX, 0x10001},
        {6, SF_DST_IP, SOP_INC, 0, 0xffff0000, 0xffff00ff, 9},
        {6, SF_SRC_IP, SOP_DEC, 1, 0, UINT32_MAX, 1ull << 32},
    };
    for (unsigned i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
        struct tstream s;
        spec_udp(&s.spec, w[i].ip, w[i].ip == 6 ? 90 : 64 + 4 * w[i].nvlan);
        s.spec.nvlan = w[i].nvlan;
        s.spec.vlan[0] = s.spec.vlan[1] = 7;
        one_var(&s.spec, w[i].field, w[i].op, w[i].lo, w[i].hi, w[i].step);
        tstream_init(&s, 2, rnd() >> 20);
        /* An address var's IPv4 header checksum: through every value. */
        bool all = w[i].field == SF_SRC_IP && w[i].ip == 4;
        run_streams(&s, 1, all ? 70000 : 3000, all ? 0xfedcba987654321ull : 0);
    }
}

/* What the walks do not cover: each var's sums per frame. */
static void test_other_vars(void **st)
{
    (void)st;
    struct tstream s;
    spec_udp(&s.spec, 4, 64);
    one_var(&s.spec, SF_SRC_PORT, SOP_RANDOM, 1, 65535, 1);
    tstream_init(&s, 0, 0xfff0);
    run_streams(&s, 1, 70000, 0);
    spec_udp(&s.spec, 4, 64);
    one_var(&s.spec, SF_SRC_IP, SOP_INC, 0x0a00000a, 0x0a000014, 1);
    one_var(&s.spec, SF_TOS, SOP_DEC, 0, 255, 7);
    one_var(&s.spec, SF_SRC_MAC, SOP_INC, 5, 9, 1);
    one_var(&s.spec, SF_DST_PORT, SOP_INC, 100, 200, 3);
    tstream_init(&s, 1, 0);
    run_streams(&s, 1, 3000, 0);
    spec_udp(&s.spec, 6, 100);
    one_var(&s.spec, SF_FLOW_LABEL, SOP_INC, 0, 0xfffff, 77777);
    one_var(&s.spec, SF_TOS, SOP_INC, 0, 255, 1);
    tstream_init(&s, 1, 0);
    run_streams(&s, 1, 3000, 0);
}

/* Four streams of different kinds and lengths sharing the slots: each
 * slot's template changes hands as the turns move over the ring. */
static void test_streams_share_slots(void **st)
{
    (void)st;
    static struct tstream s[NS_MAX];
    spec_udp(&s[0].spec, 4, 64);
    one_var(&s[0].spec, SF_SRC_PORT, SOP_INC, 1024, 65535, 1);
    spec_udp(&s[1].spec, 4, 60);
    spec_udp(&s[2].spec, 6, 200);
    s[2].spec.nvlan = 2;
    s[2].spec.vlan[0] = 10;
    s[2].spec.vlan[1] = 20;
    one_var(&s[2].spec, SF_DST_IP, SOP_DEC, 1, 1000, 3);
    spec_udp(&s[3].spec, 4, 128);
    one_var(&s[3].spec, SF_DST_IP, SOP_INC, 0x0a000001, 0x0a0000ff, 2);
    one_var(&s[3].spec, SF_DST_PORT, SOP_RANDOM, 1, 9, 1);
    for (unsigned ns = 2; ns <= NS_MAX; ns++) {
        for (unsigned j = 0; j < ns; j++)
            tstream_init(&s[j], j, rnd() >> 16);
        run_streams(s, ns, 5000, 0);
    }
}

/* TCP and ICMP streams (their frames written per frame, not carried:
 * stream_fast.c's l4_loop) beside UDP ones in the slots: no var, a walk,
 * several vars; the sequence fields across their wraps. */
static void test_tcp_icmp_streams(void **st)
{
    (void)st;
    static struct tstream s[NS_MAX];
    spec_udp(&s[0].spec, 4, 78);
    s[0].spec.proto = SPROTO_TCP;
    one_var(&s[0].spec, SF_SRC_PORT, SOP_INC, 1024, 65535, 1);
    spec_udp(&s[1].spec, 4, 66);
    s[1].spec.proto = SPROTO_ICMP;
    one_var(&s[1].spec, SF_SRC_IP, SOP_INC, 0x0a000000, 0x0a0100ff, 1);
    spec_udp(&s[2].spec, 6, 200);
    s[2].spec.proto = SPROTO_ICMP;
    s[2].spec.nvlan = 1;
    s[2].spec.vlan[0] = 10;
    one_var(&s[2].spec, SF_DST_IP, SOP_DEC, 1, 1000, 3);
    one_var(&s[2].spec, SF_FLOW_LABEL, SOP_RANDOM, 0, 0xfffff, 1);
    spec_udp(&s[3].spec, 6, 128);
    s[3].spec.proto = SPROTO_TCP;
    one_var(&s[3].spec, SF_SRC_IP, SOP_RANDOM, 0, UINT32_MAX, 1);
    for (unsigned j = 0; j < NS_MAX; j++) {
        tstream_init(&s[j], j, j % 2 ? 0xff00 : 0xffffff00);
        run_streams(&s[j], 1, 3000, 0);
    }
    tstream_init(&s[0], 0, 0);
    spec_udp(&s[1].spec, 4, 64); /* a UDP stream among them */
    for (unsigned j = 1; j < NS_MAX; j++)
        tstream_init(&s[j], j, rnd() >> 16);
    run_streams(s, NS_MAX, 5000, 0);
}

/* A burst's streams written by one call (stream_fast_burst, gen's): the
 * bytes of each stream's own calls, with every kind of loop among them
 * (no var, walks, several vars, TCP, ICMP), 1 to 4 streams, the ring's
 * wrap and drops between bursts. */
static void test_one_call_per_burst(void **st)
{
    (void)st;
    static struct tstream s[NS_MAX];
    spec_udp(&s[0].spec, 4, 64);
    one_var(&s[0].spec, SF_SRC_PORT, SOP_INC, 1024, 65535, 1);
    spec_udp(&s[1].spec, 4, 60);
    spec_udp(&s[2].spec, 4, 128);
    one_var(&s[2].spec, SF_SRC_IP, SOP_DEC, 0x0a000001, 0x0a0000ff, 2);
    one_var(&s[2].spec, SF_DST_PORT, SOP_RANDOM, 1, 9, 1);
    spec_udp(&s[3].spec, 6, 200);
    s[3].spec.proto = SPROTO_ICMP;
    one_var(&s[3].spec, SF_DST_IP, SOP_INC, 1, 1000, 3);
    for (unsigned ns = 1; ns <= NS_MAX; ns++) {
        for (unsigned j = 0; j < ns; j++)
            tstream_init(&s[j], j, rnd() >> 16);
        run_streams_as(s, ns, 5000, 0, true);
    }
    spec_udp(&s[1].spec, 4, 78);
    s[1].spec.proto = SPROTO_TCP;
    one_var(&s[1].spec, SF_DST_PORT, SOP_DEC, 7, 4464, 1);
    for (unsigned j = 0; j < NS_MAX; j++)
        tstream_init(&s[j], j, rnd() >> 16);
    run_streams_as(s, NS_MAX, 5000, 0, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sum_arith),          cmocka_unit_test(test_no_var),
        cmocka_unit_test(test_zero_sums_at_start), cmocka_unit_test(test_walks),
        cmocka_unit_test(test_other_vars),         cmocka_unit_test(test_streams_share_slots),
        cmocka_unit_test(test_tcp_icmp_streams),   cmocka_unit_test(test_one_call_per_burst),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
