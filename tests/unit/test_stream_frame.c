/* apps/stream_frame.c: templates with tags and IPv6, each field-engine
 * operation and its wrap, and the per-frame checksums against sums this
 * file computes itself, word by word (RFC 1071), from the frame's bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "apps/stream_frame.h"
#include "net/pkt.h"
#include "ref_csum.h"

/* The frame's UDP datagram checks out (a sum of 0xffff over the pseudo
 * header and the datagram with its checksum). */
static void check_udp(const uint8_t *f, uint16_t l3, bool v6, uint16_t len)
{
    uint16_t l4 = (uint16_t)(l3 + (v6 ? 40 : 20));
    uint32_t ulen = ref_be16(f + l4 + 4);
    assert_int_equal(ulen, len - l4);
    uint64_t s = v6 ? ref_sum(f + l3 + 8, 32, 0) : ref_sum(f + l3 + 12, 8, 0);
    s += 17 + ulen;
    s = ref_sum(f + l4, ulen, s);
    assert_int_equal(ref_fold(s), 0xffff);
    assert_int_not_equal(ref_be16(f + l4 + 6), 0);
    if (!v6) {
        assert_int_equal(ref_fold(ref_sum(f + l3, 20, 0)), 0xffff);
        assert_int_equal(ref_be16(f + l3 + 2), len - l3);
    } else {
        assert_int_equal(ref_be16(f + l3 + 4), ulen);
    }
}

/* A TCP or ICMP frame of stream id 3 with sequence number seq: its header
 * as RFC 9293 s3.1 (ACK|PSH, no options) or RFC 792 / RFC 4443 s4.1 (an
 * echo request) has it, the sequence field the stamp's, every checksum
 * against ref_csum.h's and the lengths len's. */
static void check_l4(const uint8_t *f, uint16_t l3, bool v6, uint8_t proto, uint16_t len,
                     uint64_t seq)
{
    uint16_t l4 = (uint16_t)(l3 + (v6 ? 40 : 20));
    assert_true(ref_l4_ok(f, l3, v6, len));
    if (proto == SPROTO_TCP) {
        assert_int_equal(f[l3 + (v6 ? 6 : 9)], 6);
        assert_int_equal(ref_be16(f + l4 + 4) << 16 | ref_be16(f + l4 + 6), (uint32_t)seq);
        assert_int_equal(ref_be16(f + l4 + 8) | ref_be16(f + l4 + 10), 0);
        assert_int_equal(f[l4 + 12], 0x50);
        assert_int_equal(f[l4 + 13], 0x18);
        assert_int_equal(rdle64(f + l4 + 20 + PL_OFF_SEQ), seq);
    } else {
        assert_int_equal(f[l3 + (v6 ? 6 : 9)], v6 ? 58 : 1);
        assert_int_equal(f[l4], v6 ? 128 : 8);
        assert_int_equal(f[l4 + 1], 0);
        assert_int_equal(ref_be16(f + l4 + 4), 3);
        assert_int_equal(ref_be16(f + l4 + 6), (uint16_t)seq);
        assert_int_equal(rdle64(f + l4 + 8 + PL_OFF_SEQ), seq);
    }
    if (!v6) {
        assert_int_equal(ref_fold(ref_sum(f + l3, 20, 0)), 0xffff);
        assert_int_equal(ref_be16(f + l3 + 2), len - l3);
    } else {
        assert_int_equal(ref_be16(f + l3 + 4), len - l4);
    }
}

/* A field's value read back from the frame at offsets this file knows. */
static uint64_t ref_field(const uint8_t *f, unsigned nvlan, bool v6, enum stream_field fld)
{
    unsigned l3 = 14 + 4 * nvlan, l4 = l3 + (v6 ? 40 : 20);
    uint32_t w0 = (uint32_t)ref_be16(f + l3) << 16 | ref_be16(f + l3 + 2);
    switch (fld) {
    case SF_DST_MAC:
        return (uint64_t)ref_be16(f) << 32 | (uint64_t)ref_be16(f + 2) << 16 | ref_be16(f + 4);
    case SF_SRC_MAC:
        return (uint64_t)ref_be16(f + 6) << 32 | (uint64_t)ref_be16(f + 8) << 16 | ref_be16(f + 10);
    case SF_VLAN:
        return ref_be16(f + 14 + 4 * (nvlan - 1)) & 0xfff;
    case SF_OUTER_VLAN:
        return ref_be16(f + 14) & 0xfff;
    case SF_SRC_IP:
        return (uint64_t)ref_be16(f + l3 + (v6 ? 20 : 12)) << 16 |
               ref_be16(f + l3 + (v6 ? 22 : 14));
    case SF_DST_IP:
        return (uint64_t)ref_be16(f + l3 + (v6 ? 36 : 16)) << 16 |
               ref_be16(f + l3 + (v6 ? 38 : 18));
    case SF_FLOW_LABEL:
        return w0 & 0xfffff;
    case SF_TOS:
        return v6 ? (w0 >> 20) & 0xff : f[l3 + 1];
    case SF_SRC_PORT:
        return ref_be16(f + l4);
    default:
        return ref_be16(f + l4 + 2);
    }
}

static const struct stream_addrs addrs = {
    {2, 0, 0, 0, 0, 2}, {2, 0, 0, 0, 0, 1}, 0x0a000002, 0x0a000001, 9000, 9001};

static void spec4(struct stream_spec *s, uint16_t size)
{
    memset(s, 0, sizeof(*s));
    s->ip = 4;
    s->ttl = 64;
    s->sizes.n = 1;
    s->sizes.size[0] = size;
    s->sizes.weight[0] = 1;
    s->sizes.cycle = 1;
}

static void test_fe_ops(void **st)
{
    (void)st;
    struct stream_fe fe;
    uint64_t rng = 1;
    struct stream_spec s;
    struct stream_tmpl t;
    static uint8_t f[64];
    spec4(&s, 64);
    assert_int_equal(stream_tmpl_build(f, 64, &s, &addrs, 0, 0, &t), 0);
    struct stream_var inc = {SF_SRC_PORT, SOP_INC, 10, 15, 2};
    stream_fe_init(&fe, &inc, &t);
    static const uint64_t want_inc[] = {10, 12, 14, 10, 12};
    for (unsigned i = 0; i < 5; i++)
        assert_int_equal(stream_fe_next(&fe, &rng), want_inc[i]);
    struct stream_var dec = {SF_SRC_PORT, SOP_DEC, 10, 15, 2};
    stream_fe_init(&fe, &dec, &t);
    static const uint64_t want_dec[] = {15, 13, 11, 15, 13};
    for (unsigned i = 0; i < 5; i++)
        assert_int_equal(stream_fe_next(&fe, &rng), want_dec[i]);
    /* The top of a 48-bit field: the step never carries past it. */
    uint64_t top = (1ull << 48) - 1;
    struct stream_var edge = {SF_SRC_MAC, SOP_INC, top - 2, top, 1};
    stream_fe_init(&fe, &edge, &t);
    static const uint64_t want_edge[] = {2, 1, 0, 2};
    for (unsigned i = 0; i < 4; i++)
        assert_int_equal(stream_fe_next(&fe, &rng), top - want_edge[i]);
    struct stream_var full = {SF_SRC_IP, SOP_DEC, 0, UINT32_MAX, 1ull << 32};
    stream_fe_init(&fe, &full, &t);
    assert_int_equal(stream_fe_next(&fe, &rng), UINT32_MAX);
    assert_int_equal(stream_fe_next(&fe, &rng), UINT32_MAX);
    /* Random: inside the range, every value drawn. */
    struct stream_var rnd = {SF_DST_PORT, SOP_RANDOM, 100, 107, 1};
    unsigned seen[8] = {0};
    stream_fe_init(&fe, &rnd, &t);
    for (unsigned i = 0; i < 8000; i++) {
        uint64_t v = stream_fe_next(&fe, &rng);
        assert_true(v >= 100 && v <= 107);
        seen[v - 100]++;
    }
    for (unsigned i = 0; i < 8; i++)
        assert_true(seen[i] > 800 && seen[i] < 1200);
}

/* Frames of a template with vars: every one's checksums and fields. */
static void run_vars(const struct stream_spec *s, uint16_t len, unsigned nvars,
                     const struct stream_var *vars, uint16_t sizes_lo, uint64_t seq0)
{
    static uint8_t f[PKT_MAX_FRAME];
    struct stream_tmpl t;
    uint32_t varies = 0;
    struct stream_fe fe[STREAM_VARS_MAX];
    for (unsigned k = 0; k < nvars; k++)
        varies |= 1u << vars[k].field;
    assert_int_equal(stream_tmpl_build(f, len, s, &addrs, 3, varies, &t), 0);
    for (unsigned k = 0; k < nvars; k++)
        stream_fe_init(&fe[k], &vars[k], &t);
    uint64_t rng = 7;
    for (unsigned i = 0; i < 300; i++) {
        uint32_t udp = t.udp_base, ip = t.ip_base;
        for (unsigned k = 0; k < nvars; k++) {
            uint64_t want = fe[k].cur;
            stream_fe_apply(&fe[k], f, &t, &rng, &udp, &ip);
            uint64_t got = ref_field(f, s->nvlan, s->ip == 6, (enum stream_field)vars[k].field);
            if (vars[k].op == SOP_RANDOM)
                assert_true(got >= vars[k].lo && got <= vars[k].hi);
            else
                assert_int_equal(got, want);
        }
        uint16_t n = t.size_varies ? (uint16_t)(sizes_lo + i % (len - sizes_lo + 1)) : len;
        stream_frame_finish(f, &t, n, udp, ip, seq0 + i, 0x123456789abcdefull * i);
        if (s->proto == SPROTO_UDP)
            check_udp(f, t.l3, s->ip == 6, n);
        else
            check_l4(f, t.l3, s->ip == 6, s->proto, n, seq0 + i);
        assert_int_equal(rdle64(f + t.pl + PL_OFF_SEQ), seq0 + i);
        assert_int_equal(rdle32(f + t.pl + PL_OFF_STREAM) & 0xffff, 3);
        if (n >= t.pl + PL_LEN)
            assert_int_equal(rdle32(f + t.pl + PL_OFF_MAGIC), PL_MAGIC);
    }
}

static void test_ipv4_vars(void **st)
{
    (void)st;
    struct stream_spec s;
    spec4(&s, 64);
    s.tos = 3;
    static const struct stream_var v[] = {{SF_SRC_IP, SOP_INC, 0x0a00000a, 0x0a000014, 1},
                                          {SF_DST_PORT, SOP_RANDOM, 1, 65535, 1},
                                          {SF_TOS, SOP_DEC, 0, 255, 7},
                                          {SF_SRC_MAC, SOP_INC, 5, 9, 1}};
    run_vars(&s, 64, 4, v, 64, 1000);
    run_vars(&s, 1514, 4, v, 1514, 1000);
    /* The 60-byte frame's short stamp. */
    run_vars(&s, 60, 2, v, 60, 1000);
    static uint8_t f[64];
    struct stream_tmpl t;
    assert_int_equal(stream_tmpl_build(f, 60, &s, &addrs, 3, 0, &t), 0);
    stream_frame_finish(f, &t, 60, t.udp_base, t.ip_base, 5, 6);
    struct pkt_info pi;
    assert_int_equal(pkt_parse(f, 60, true, &pi), PKT_UDP);
    assert_int_equal(pi.saddr, 0x0a000002);
    assert_int_equal(pi.dport, 9001);
    assert_int_equal(f[15], 3); /* tos */
    assert_int_equal(f[22], 64);
    uint32_t id;
    uint64_t seq;
    assert_true(pkt_payload_hdr(f, &pi, &id, &seq));
    assert_int_equal(id, 3);
    assert_int_equal(seq, 5);
}

static void test_vlan_ipv4(void **st)
{
    (void)st;
    struct stream_spec s;
    spec4(&s, 68);
    s.nvlan = 1;
    s.vlan[0] = 100;
    static uint8_t f[128];
    struct stream_tmpl t;
    assert_int_equal(stream_tmpl_build(f, 68, &s, &addrs, 0, 1u << SF_VLAN, &t), 0);
    assert_int_equal(t.l3, 18);
    assert_int_equal(ref_be16(f + 12), 0x8100);
    assert_int_equal(ref_be16(f + 16), 0x0800);
    stream_field_set(f, &t, SF_VLAN, 4094);
    assert_int_equal(ref_be16(f + 14), 4094);
    static const struct stream_var v[] = {{SF_VLAN, SOP_INC, 1, 4094, 1},
                                          {SF_DST_IP, SOP_INC, 1, 9, 4}};
    run_vars(&s, 68, 2, v, 68, 1000);
    /* Too short for the headers and the 18-byte stamp. */
    assert_int_equal(stream_tmpl_build(f, 63, &s, &addrs, 0, 0, &t), -22);
}

static void test_qinq_ipv6(void **st)
{
    (void)st;
    struct stream_spec s;
    spec4(&s, 200);
    s.ip = 6;
    s.nvlan = 2;
    s.vlan[0] = 200;
    s.vlan[1] = 100;
    s.tos = 0xb8;
    s.flow_label = 0x12345;
    s.size_range = true;
    s.sizes.n = 2;
    s.sizes.size[0] = 90;
    s.sizes.size[1] = 200;
    for (unsigned i = 0; i < 16; i++) {
        s.sip6[i] = (uint8_t)(0xfd + i);
        s.dip6[i] = (uint8_t)(0x20 + 3 * i);
    }
    static uint8_t f[256];
    struct stream_tmpl t;
    assert_int_equal(stream_tmpl_build(f, 200, &s, &addrs, 1, 0, &t), 0);
    assert_int_equal(ref_be16(f + 12), 0x88a8);
    assert_int_equal(ref_be16(f + 14), 200);
    assert_int_equal(ref_be16(f + 16), 0x8100);
    assert_int_equal(ref_be16(f + 18), 100);
    assert_int_equal(ref_be16(f + 20), 0x86dd);
    assert_int_equal(t.l3, 22);
    assert_int_equal(f[22] >> 4, 6);
    assert_int_equal(((f[22] & 0xf) << 4) | f[23] >> 4, 0xb8);
    assert_int_equal((f[23] & 0xf) << 16 | ref_be16(f + 24), 0x12345);
    assert_int_equal(f[28], 17);
    assert_int_equal(f[29], 64);
    assert_memory_equal(f + 30, s.sip6, 16);
    static const struct stream_var v[] = {{SF_FLOW_LABEL, SOP_INC, 0, 0xfffff, 77777},
                                          {SF_SRC_IP, SOP_RANDOM, 0, UINT32_MAX, 1},
                                          {SF_OUTER_VLAN, SOP_DEC, 1, 3, 1},
                                          {SF_TOS, SOP_INC, 0, 255, 1}};
    run_vars(&s, 200, 0, v, 90, 1000);
    run_vars(&s, 200, 4, v, 90, 1000);
}

/* TCP and ICMP frames (IPv4 and IPv6, tagged, of one size and of a
 * range) with vars of every kind: their checksums against ref_csum.h's
 * per frame, the sequence fields across their wraps (ICMP's at 2^16,
 * TCP's at 2^32); pkt_parse takes the IPv4 ones as stamped frames of
 * stream 3, and refuses one with a checksum off. */
static void test_tcp_icmp_frames(void **st)
{
    (void)st;
    static const struct stream_var v4[] = {{SF_SRC_IP, SOP_INC, 0x0a00000a, 0x0a000014, 1},
                                           {SF_DST_IP, SOP_RANDOM, 0, UINT32_MAX, 1},
                                           {SF_TOS, SOP_DEC, 0, 255, 7},
                                           {SF_SRC_MAC, SOP_INC, 5, 9, 1}};
    static const struct stream_var tcp_ports[] = {{SF_DST_PORT, SOP_RANDOM, 1, 65535, 1},
                                                  {SF_SRC_PORT, SOP_DEC, 1, 3, 1}};
    static const struct stream_var v6[] = {{SF_FLOW_LABEL, SOP_INC, 0, 0xfffff, 77777},
                                           {SF_SRC_IP, SOP_RANDOM, 0, UINT32_MAX, 1},
                                           {SF_DST_IP, SOP_DEC, 0, 9, 2},
                                           {SF_TOS, SOP_INC, 0, 255, 1}};
    struct stream_spec s;
    for (uint8_t proto = SPROTO_TCP; proto <= SPROTO_ICMP; proto++) {
        uint16_t min = proto == SPROTO_TCP ? 78 : 66;
        spec4(&s, min);
        s.proto = proto;
        run_vars(&s, min, 4, v4, min, 0xfff0);
        run_vars(&s, 1514, 4, v4, 1514, 0xfffffff0);
        if (proto == SPROTO_TCP)
            run_vars(&s, min, 2, tcp_ports, min, 5);
        s.nvlan = 1;
        s.vlan[0] = 7;
        s.size_range = true;
        s.sizes.n = 2;
        s.sizes.size[0] = (uint16_t)(min + 4);
        s.sizes.size[1] = 400;
        run_vars(&s, 400, 4, v4, (uint16_t)(min + 4), 0xffffff00);
        spec4(&s, 300);
        s.proto = proto;
        s.ip = 6;
        s.nvlan = 2;
        s.vlan[0] = s.vlan[1] = 9;
        for (unsigned i = 0; i < 16; i++) {
            s.sip6[i] = (uint8_t)(0xfd + i);
            s.dip6[i] = (uint8_t)(0x20 + 3 * i);
        }
        run_vars(&s, 300, 4, v6, 300, 0xff80);
        s.size_range = true;
        s.sizes.n = 2;
        s.sizes.size[0] = (uint16_t)(min + 20 + 8);
        s.sizes.size[1] = 300;
        run_vars(&s, 300, 4, v6, (uint16_t)(min + 28), 0xfffffff8);
    }
    /* The smallest frames hold the whole stamp: one byte less holds none. */
    static uint8_t f[128];
    struct stream_tmpl t;
    struct pkt_info pi;
    uint32_t id;
    uint64_t seq;
    for (uint8_t proto = SPROTO_TCP; proto <= SPROTO_ICMP; proto++) {
        uint16_t min = proto == SPROTO_TCP ? 78 : 66;
        spec4(&s, min);
        s.proto = proto;
        assert_int_equal(stream_tmpl_build(f, (uint16_t)(min - 1), &s, &addrs, 3, 0, &t), -22);
        assert_int_equal(stream_tmpl_build(f, min, &s, &addrs, 3, 0, &t), 0);
        stream_frame_finish(f, &t, min, t.udp_base, t.ip_base, 0x10005, 6);
        assert_int_equal(pkt_parse(f, min, true, &pi), PKT_STAMPED);
        assert_int_equal(pi.payload_off, t.pl);
        assert_int_equal(pi.dport, proto == SPROTO_TCP ? 9001 : 0);
        assert_true(pkt_payload_hdr(f, &pi, &id, &seq));
        assert_int_equal(id, 3);
        assert_int_equal(seq, 0x10005);
        f[t.pl + PL_OFF_TSC] ^= 1;
        assert_int_equal(pkt_parse(f, min, true, &pi), PKT_BAD_CSUM);
        assert_int_equal(pkt_parse(f, min, false, &pi), PKT_STAMPED);
        f[t.pl + PL_OFF_MAGIC] ^= 1; /* no magic: the stack's */
        assert_int_equal(pkt_parse(f, min, true, &pi), PKT_IP_OTHER);
    }
}

/* The engine's IPv6 frames (UDP, TCP, ICMPv6; untagged and QinQ; the
 * smallest and a larger size) are the receivers': pkt_parse takes them
 * (UDP as PKT_UDP, the others as stamped) with the stamp where the
 * engine wrote it, refuses one with its checksum off, and leaves TCP and
 * ICMPv6 without the magic to the stack. */
static void test_ipv6_frames_parse(void **st)
{
    (void)st;
    static uint8_t f[320];
    struct stream_spec s;
    struct stream_tmpl t;
    struct pkt_info pi;
    uint32_t id;
    uint64_t seq;
    for (uint8_t proto = SPROTO_UDP; proto <= SPROTO_ICMP; proto++) {
        for (unsigned nvlan = 0; nvlan <= 2; nvlan += 2) {
            uint16_t min = (uint16_t)(4 * nvlan + (proto == SPROTO_UDP   ? 80
                                                   : proto == SPROTO_TCP ? 98
                                                                         : 86));
            for (uint16_t len = min; len <= 300; len = (uint16_t)(len + 300 - min)) {
                spec4(&s, len);
                s.ip = 6;
                s.proto = proto;
                s.nvlan = (uint8_t)nvlan;
                s.vlan[0] = 200;
                s.vlan[1] = 100;
                s.sip6[0] = s.dip6[0] = 0xfd;
                s.sip6[15] = 2;
                s.dip6[15] = 1;
                assert_int_equal(stream_tmpl_build(f, len, &s, &addrs, 3, 0, &t), 0);
                stream_frame_finish(f, &t, len, t.udp_base, t.ip_base, 0x10005, 6);
                assert_int_equal(pkt_parse(f, len, true, &pi),
                                 proto == SPROTO_UDP ? PKT_UDP : PKT_STAMPED);
                assert_int_equal(pi.ipv, 6);
                assert_int_equal(pi.nvlan, nvlan);
                assert_int_equal(pi.payload_off, t.pl);
                assert_int_equal(pi.payload_len, len - t.pl);
                assert_true(pkt_payload_hdr(f, &pi, &id, &seq));
                assert_int_equal(id, 3);
                assert_int_equal(seq, 0x10005);
                f[t.pl + PL_OFF_TSC] ^= 1;
                assert_int_equal(pkt_parse(f, len, true, &pi), PKT_BAD_CSUM);
                if (proto == SPROTO_UDP)
                    continue;
                f[t.pl + PL_OFF_MAGIC] ^= 1; /* no magic: the stack's */
                assert_int_equal(pkt_parse(f, len, false, &pi), nvlan ? PKT_OTHER : PKT_IP_OTHER);
            }
        }
    }
}

/* The config line's shorthand as a stream (stream_spec_one) sends the
 * frames gen's fixed-frame builder (pkt_tmpl_build, pkt_patch) sent, byte
 * for byte: one size, and each size of a mix. */
static void test_shorthand_frames(void **st)
{
    (void)st;
    static const uint16_t sizes[] = {60, 64, 65, 66, 128, 1514};
    const struct pkt_flow fl = {addrs.sip, addrs.dip, addrs.sport, addrs.dport, 0};
    const struct rate r = {RATE_PPS, 1000};
    static uint8_t f[1600], g[1600];
    struct imix mix = {.n = 3, .size = {60, 590, 1514}, .weight = {7, 4, 1}, .cycle = 12};
    struct stream_spec s;
    struct stream_tmpl t;
    struct pkt_tmpl pt;
    for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        struct imix one = {.n = 1, .size = {sizes[i]}, .weight = {1}, .cycle = 1};
        stream_spec_one(&one, &r, &s);
        assert_int_equal(s.rate.unit, RATE_PPS);
        assert_int_equal(s.rate.per_s, 1000);
        assert_int_equal(stream_tmpl_build(f, sizes[i], &s, &addrs, 0, 0, &t), 0);
        stream_frame_finish(f, &t, sizes[i], t.udp_base, t.ip_base, 7 + i, 0x123456789abull);
        assert_int_equal(pkt_tmpl_build(g, sizes[i], addrs.dmac, addrs.smac, &fl, &pt), 0);
        pkt_patch(g, &pt, 7 + i, 0x123456789abull);
        assert_memory_equal(f, g, sizes[i]);
    }
    stream_spec_one(&mix, &r, &s);
    assert_int_equal(s.sizes.n, 3);
    assert_int_equal(stream_tmpl_build(f, 1514, &s, &addrs, 0, 0, &t), 0);
    for (unsigned k = 0; k < mix.n; k++) {
        uint16_t len = mix.size[k];
        stream_frame_finish(f, &t, len, t.udp_base, t.ip_base, k, 99 + k);
        assert_int_equal(pkt_tmpl_build(g, len, addrs.dmac, addrs.smac, &fl, &pt), 0);
        pkt_patch(g, &pt, k, 99 + k);
        assert_memory_equal(f, g, len);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fe_ops),
        cmocka_unit_test(test_shorthand_frames),
        cmocka_unit_test(test_ipv4_vars),
        cmocka_unit_test(test_vlan_ipv4),
        cmocka_unit_test(test_qinq_ipv6),
        cmocka_unit_test(test_tcp_icmp_frames),
        cmocka_unit_test(test_ipv6_frames_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
