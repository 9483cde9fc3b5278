/* apps/stream_spec.c: the guest's reading of the runner's stream encoding
 * (tools/vnperflib/run/streamfile.py writes it; tests/py/test_streamfile.py
 * checks the runner's side): what it takes, and each thing it refuses. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "apps/stream_spec.h"

#define HDR "vnperf-streams 2\n"
#define S0                                                                                         \
    "s id=0 ip=4 proto=udp vlan=0 smac=0 dmac=0 sip=0 dip=0 sport=0 dport=0 tos=0 ttl=64 fl=0 "    \
    "size=60:7/590:4/1514:1 rate=pps:900000 mode=continuous frames=0 gap_ns=0 bursts=0 dir=tx\n"
#define S1                                                                                         \
    "s id=1 ip=4 proto=tcp vlan=100/200 smac=020000000001 dmac=0 sip=167772162 dip=0 sport=1 "     \
    "dport=2 "                                                                                     \
    "tos=4 ttl=9 fl=0 size=128:1 rate=bps:1000000 mode=multi_burst frames=10 gap_ns=100000 "       \
    "bursts=5 dir=rx\n"
#define S2                                                                                         \
    "s id=2 ip=6 proto=icmp vlan=0 smac=0 dmac=0 sip=fd000000000000000000000000000002 "            \
    "dip=fd000000000000000000000000000001 sport=0 dport=0 tos=0 ttl=64 fl=5 size=100-200 "         \
    "rate=max mode=continuous frames=0 gap_ns=0 bursts=0 dir=tx\n"
#define V0 "v f=src_ip op=inc lo=167772170 hi=167772180 step=1\n"

static struct stream_spec specs[STREAMS_MAX];

static void test_parse(void **st)
{
    (void)st;
    char why[160] = "";
    unsigned n;
    assert_int_equal(stream_spec_parse(HDR S0 V0 S1 S2, specs, &n, why, sizeof(why)), 0);
    assert_int_equal(n, 3);
    assert_int_equal(specs[0].sizes.n, 3);
    assert_int_equal(specs[0].sizes.cycle, 12);
    assert_int_equal(specs[0].rate.unit, RATE_PPS);
    assert_int_equal(specs[0].rate.per_s, 900000);
    assert_int_equal(specs[0].nvars, 1);
    assert_int_equal(specs[0].var[0].field, SF_SRC_IP);
    assert_int_equal(specs[0].var[0].lo, 167772170);
    assert_int_equal(specs[1].nvlan, 2);
    assert_int_equal(specs[1].vlan[0], 100);
    assert_int_equal(specs[1].vlan[1], 200);
    assert_true(specs[1].has_smac && !specs[1].has_dmac);
    assert_int_equal(specs[1].smac[5], 1);
    assert_int_equal(specs[1].sip4, 0x0a000002);
    assert_int_equal(specs[1].mode, SMODE_MULTI_BURST);
    assert_int_equal(specs[1].gap_ns, 100000);
    assert_int_equal(specs[1].rate.unit, RATE_BPS);
    assert_int_equal(specs[0].dir, SDIR_TX);
    assert_int_equal(specs[1].dir, SDIR_RX);
    assert_int_equal(specs[2].ip, 6);
    assert_int_equal(specs[2].sip6[0], 0xfd);
    assert_int_equal(specs[2].sip6[15], 2);
    assert_true(specs[2].size_range);
    assert_int_equal(specs[2].sizes.size[1], 200);
    assert_int_equal(specs[2].flow_label, 5);
    assert_int_equal(specs[0].proto, SPROTO_UDP);
    assert_int_equal(specs[1].proto, SPROTO_TCP);
    assert_int_equal(specs[2].proto, SPROTO_ICMP);
}

/* One word of S0 replaced (or the line changed): refused, with a reason. */
static void refused(const char *text)
{
    char why[160] = "";
    unsigned n = 99;
    assert_int_equal(stream_spec_parse(text, specs, &n, why, sizeof(why)), -EINVAL);
    assert_true(why[0] != 0);
    assert_true(strlen(why) < sizeof(why));
}

static void test_refused(void **st)
{
    (void)st;
    static const char *const bad[] = {
        "",
        "vnperf-streams 1\n" S0, /* format 1: no proto= */
        HDR,
        HDR V0,
        HDR "x\n",
        HDR S0 "v f=src_ip op=inc lo=1 hi=2 step=1",            /* no newline */
        HDR S0 "v f=src_ip op=inc lo=3 hi=2 step=1\n",          /* lo > hi */
        HDR S0 "v f=src_ip op=inc lo=0 hi=4294967296 step=1\n", /* past 32 bits */
        HDR S0 "v f=tos op=inc lo=0 hi=256 step=1\n",
        HDR S0 "v f=vlan op=inc lo=1 hi=2 step=1\n",       /* no tag */
        HDR S0 "v f=flow_label op=inc lo=1 hi=2 step=1\n", /* IPv4 */
        HDR S0 "v f=tos op=up lo=0 hi=2 step=1\n",
        HDR S0 "v f=tos op=inc lo=0 hi=2 step=0\n",
        HDR S0 "v f=tos op=inc lo=0 hi=2\n",
        HDR S0 "v f=tos op=inc lo=0 hi=2 step=1 step=1\n",
        HDR S0 "v f=tos op=inc lo=0 hi=2 step=1\nv f=tos op=inc lo=0 hi=2 step=1\n",
        HDR S0 V0 V0 V0 V0 V0,
        HDR S1 /* id 1 first */,
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        refused(bad[i]);
}

/* S0 with one key's value replaced. */
static void refused_value(const char *key, const char *val)
{
    char line[600], text[700];
    const char *s0 = S0;
    const char *at = strstr(s0, key);
    assert_non_null(at);
    const char *end = strchr(at, ' ') ? strchr(at, ' ') : strchr(at, '\n');
    snprintf(line, sizeof(line), "%.*s%s=%s%s", (int)(at - s0), s0, key, val, end);
    snprintf(text, sizeof(text), HDR "%s", line);
    refused(text);
}

static void test_refused_values(void **st)
{
    (void)st;
    static const char *const kv[][2] = {
        {"ip", "5"},
        {"proto", "sctp"},
        {"proto", "UDP"},
        {"proto", ""},
        {"vlan", "0/1"},
        {"vlan", "4095"},
        {"vlan", "1/2/3"},
        {"smac", "0201"},
        {"dmac", "zz0000000000"},
        {"sip", "4294967296"},
        {"sport", "65536"},
        {"tos", "256"},
        {"ttl", "0"},
        {"fl", "7"},
        {"size", "59:1"},
        {"size", "64"},
        {"size", "200-100"},
        {"size", "64:0"},
        {"size", "64:4000/65:100"},
        {"rate", "pps:0"},
        {"rate", "kpps:1"},
        {"rate", "pps:1000000001"},
        {"mode", "bursty"},
        {"frames", "5"},
        {"gap_ns", "1"},
        {"bursts", "1"},
        {"id", "1"},
        {"sport", "x"},
        {"dir", "up"},
        {"dir", "RX"},
    };
    for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
        refused_value(kv[i][0], kv[i][1]);
    /* A missing key, a repeated one, an unknown one. */
    refused(HDR "s id=0\n");
    refused(HDR "s id=0 id=0 ip=4\n");
    refused(
        HDR
        "s ip=4 proto=udp id=0 vlan=0 smac=0 dmac=0 sip=0 dip=0 sport=0 dport=0 tos=0 ttl=64 fl=0 "
        "size=64:1 rate=max mode=continuous frames=0 gap_ns=0 bursts=0 dir=tx x=1\n");
    /* sip= before ip= (its width depends on it). */
    refused(
        HDR
        "s id=0 sip=0 ip=4 proto=udp vlan=0 smac=0 dmac=0 dip=0 sport=0 dport=0 tos=0 ttl=64 fl=0 "
        "size=64:1 rate=max mode=continuous frames=0 gap_ns=0 bursts=0 dir=tx\n");
}

static void test_modes(void **st)
{
    (void)st;
    char why[160];
    unsigned n;
    assert_int_equal(
        stream_spec_parse(
            HDR "s id=0 ip=4 proto=udp vlan=7 smac=0 dmac=0 sip=0 dip=0 sport=0 dport=0 tos=0 "
                "ttl=64 fl=0 size=64:1 rate=pps:10 mode=burst frames=5 gap_ns=0 "
                "bursts=0 dir=tx\nv f=vlan op=random lo=1 hi=9 step=1\n",
            specs, &n, why, sizeof(why)),
        0);
    assert_int_equal(specs[0].mode, SMODE_BURST);
    assert_int_equal(specs[0].frames, 5);
    assert_int_equal(specs[0].var[0].op, SOP_RANDOM);
    /* Poisson without a rate has no mean. */
    refused(
        HDR
        "s id=0 ip=4 proto=udp vlan=0 smac=0 dmac=0 sip=0 dip=0 sport=0 dport=0 tos=0 ttl=64 fl=0 "
        "size=64:1 rate=max mode=poisson frames=0 gap_ns=0 bursts=0 dir=tx\n");
    /* A tagged 64-byte frame cannot hold its headers and the stamp. */
    refused(HDR "s id=0 ip=6 proto=udp vlan=7 smac=0 dmac=0 sip=fd000000000000000000000000000002 "
                "dip=fd000000000000000000000000000001 sport=0 dport=0 tos=0 ttl=64 fl=0 "
                "size=64:1 rate=max mode=continuous frames=0 gap_ns=0 bursts=0 dir=tx\n");
}

/* proto=: each one's smallest frame (its headers and, for TCP and ICMP,
 * the whole stamp), and ICMP's lack of ports. */
static void test_protos(void **st)
{
    (void)st;
    char why[160], text[400];
    unsigned n;
    static const struct {
        const char *proto, *ip, *vlan, *ports;
        unsigned min;
    } p[] = {
        {"udp", "4", "0", "sport=0 dport=0", 60},   {"tcp", "4", "0", "sport=1 dport=2", 78},
        {"tcp", "4", "5/6", "sport=0 dport=0", 86}, {"icmp", "4", "0", "sport=0 dport=0", 66},
        {"icmp", "4", "5", "sport=0 dport=0", 70},  {"tcp", "6", "0", "sport=0 dport=0", 98},
        {"icmp", "6", "0", "sport=0 dport=0", 86},
    };
    for (unsigned i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
        for (unsigned size = p[i].min - 1; size <= p[i].min; size++) {
            bool v6 = p[i].ip[0] == '6';
            snprintf(text, sizeof(text),
                     HDR "s id=0 ip=%s proto=%s vlan=%s smac=0 dmac=0 sip=%s dip=%s %s tos=0 "
                         "ttl=64 fl=0 size=%u:1 rate=max mode=continuous frames=0 gap_ns=0 "
                         "bursts=0 dir=tx\n",
                     p[i].ip, p[i].proto, p[i].vlan, v6 ? "fd000000000000000000000000000002" : "0",
                     v6 ? "fd000000000000000000000000000001" : "0", p[i].ports, size);
            int rc = stream_spec_parse(text, specs, &n, why, sizeof(why));
            assert_int_equal(rc, size < p[i].min ? -EINVAL : 0);
        }
    }
    /* ICMP has no ports: none given, no var on them. */
    refused(HDR
            "s id=0 ip=4 proto=icmp vlan=0 smac=0 dmac=0 sip=0 dip=0 sport=5 dport=0 tos=0 "
            "ttl=64 fl=0 size=66:1 rate=max mode=continuous frames=0 gap_ns=0 bursts=0 dir=tx\n");
    refused(HDR "s id=0 ip=4 proto=icmp vlan=0 smac=0 dmac=0 sip=0 dip=0 sport=0 dport=0 tos=0 "
                "ttl=64 fl=0 size=66:1 rate=max mode=continuous frames=0 gap_ns=0 bursts=0 dir=tx\n"
                "v f=dst_port op=inc lo=1 hi=2 step=1\n");
    assert_int_equal(
        stream_spec_parse(
            HDR "s id=0 ip=4 proto=tcp vlan=0 smac=0 dmac=0 sip=0 dip=0 sport=0 "
                "dport=0 tos=0 ttl=64 fl=0 size=78:1 rate=max mode=continuous "
                "frames=0 gap_ns=0 bursts=0 dir=tx\nv f=dst_port op=inc lo=1 hi=2 step=1\n",
            specs, &n, why, sizeof(why)),
        0);
}

/* The fuzz harness's seed (tests/fuzz/seeds/fuzz_stream_spec) is text
 * the parser takes, proto= and all: the fuzzer starts from accepted input. */
#define FUZZ_SEED "tests/fuzz/seeds/fuzz_stream_spec/three"
static void test_fuzz_seed(void **st)
{
    (void)st;
    static char text[STREAM_TEXT_MAX];
    char why[160] = "";
    unsigned n;
    FILE *f = fopen(FUZZ_SEED, "r");
    if (!f)
        fail_msg("cannot open %s from the repository root", FUZZ_SEED);
    size_t len = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[len] = 0;
    assert_int_equal(stream_spec_parse(text, specs, &n, why, sizeof(why)), 0);
    assert_int_equal(n, 3);
    assert_int_equal(specs[0].proto, SPROTO_UDP);
    assert_int_equal(specs[1].proto, SPROTO_TCP);
    assert_int_equal(specs[2].proto, SPROTO_ICMP);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),          cmocka_unit_test(test_refused),
        cmocka_unit_test(test_refused_values), cmocka_unit_test(test_modes),
        cmocka_unit_test(test_protos),         cmocka_unit_test(test_fuzz_seed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
