/* tools/peer/peer_gen.c: the host peer's stream sender builds the stream
 * file's rx streams only, with their file ids in the stamp, per-stream
 * sequence numbers, the field engine's values and valid checksums, and
 * sends each at its own rate on a simulated nanosecond clock. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tools/peer/peer_gen.h"

#define HDR  "vnperf-streams 2\n"
#define TAIL "mode=continuous frames=0 gap_ns=0 bursts=0 "
#define S(id, size, rate, dir)                                                                     \
    "s id=" id                                                                                     \
    " ip=4 proto=udp vlan=0 smac=0 dmac=0 sip=0 dip=0 sport=0 dport=0 tos=0 ttl=64 fl=0 "          \
    "size=" size " rate=" rate " " TAIL "dir=" dir "\n"
#define FILE3                                                                                      \
    HDR S("0", "60:1", "pps:1000", "tx")                                                           \
        S("1", "128:1", "pps:500", "rx") "v f=src_port op=inc lo=1000 hi=1002 step=1\n" S(         \
            "2", "64:3/200:1", "pps:2000", "rx")

static const struct stream_addrs addrs = {.smac = {2, 0, 0, 0, 0, 1},
                                          .dmac = {0x52, 0x54, 0, 0x12, 0x34, 0x56},
                                          .sip = 0x0a000202,
                                          .dip = 0x0a00020f,
                                          .sport = 9000,
                                          .dport = 9001};

static struct peer_gen g;

static void test_rx_streams_only(void **st)
{
    (void)st;
    char why[160] = "";
    assert_int_equal(peer_gen_load(&g, FILE3, &addrs, why, sizeof(why)), 0);
    assert_int_equal(g.n, 2);
    assert_int_equal(g.s[0].id, 1);
    assert_int_equal(g.s[1].id, 2);
    assert_int_equal(g.maxlen, 200);
    peer_gen_free(&g);
}

static void test_no_rx_stream_refused(void **st)
{
    (void)st;
    char why[160] = "";
    assert_int_equal(peer_gen_load(&g, HDR S("0", "60:1", "max", "tx"), &addrs, why, sizeof(why)),
                     -EINVAL);
    assert_non_null(strstr(why, "no rx stream"));
    peer_gen_free(&g);
    assert_int_equal(peer_gen_load(&g, HDR "s id=0 ip=4\n", &addrs, why, sizeof(why)), -EINVAL);
    assert_non_null(strstr(why, "line 2"));
    peer_gen_free(&g);
}

/* Every frame of 1 s on a clock of 1 us steps: each stream its rate
 * exactly, each frame valid with its id, its sequence number and the
 * field engine's port. */
static void test_frames_and_rates(void **st)
{
    (void)st;
    static uint8_t f[256];
    char why[160];
    uint64_t seen[3] = {0}, sizes200 = 0;
    assert_int_equal(peer_gen_load(&g, FILE3, &addrs, why, sizeof(why)), 0);
    assert_int_equal(peer_gen_start(&g, 0, 1), 0);
    for (uint64_t now = 0; now < 1000000000ull; now += 1000) {
        int k;
        while ((k = peer_gen_pick(&g, now)) >= 0) {
            uint16_t len = peer_gen_frame(&g, (unsigned)k, f, now, 42);
            struct pkt_info pi;
            uint32_t id;
            uint64_t seq;
            assert_int_equal(pkt_parse(f, len, true, &pi), PKT_UDP);
            assert_true(pkt_payload_hdr(f, &pi, &id, &seq));
            assert_int_equal(id, g.s[k].id);
            assert_int_equal(seq, seen[id]++);
            assert_int_equal(pi.saddr, addrs.sip);
            assert_int_equal(pi.daddr, addrs.dip);
            assert_memory_equal(f, addrs.dmac, 6);
            if (id == 1) {
                assert_int_equal(len, 128);
                assert_int_equal(pi.sport, 1000 + (seq % 3));
            } else {
                assert_int_equal(pi.sport, 9000);
                sizes200 += len == 200;
            }
        }
    }
    assert_int_equal(seen[0], 0);
    assert_int_equal(seen[1], 500);
    assert_int_equal(seen[2], 2000);
    assert_int_equal(sizes200, 500);
    assert_int_equal(g.s[0].packets, 500);
    assert_int_equal(g.s[1].bytes, 1500 * 64 + 500 * 200);
    assert_false(peer_gen_done(&g));
    peer_gen_free(&g);
}

/* A burst-only file is done once its frames are out. */
static void test_burst_done(void **st)
{
    (void)st;
    char why[160];
    assert_int_equal(peer_gen_load(&g,
                                   HDR
                                   "s id=0 ip=4 proto=udp vlan=0 smac=0 dmac=0 sip=0 dip=0 sport=0 "
                                   "dport=0 tos=0 ttl=64 fl=0 size=60:1 rate=pps:100 "
                                   "mode=burst frames=7 gap_ns=0 bursts=0 dir=rx\n",
                                   &addrs, why, sizeof(why)),
                     0);
    assert_int_equal(peer_gen_start(&g, 0, 1), 0);
    static uint8_t f[64];
    unsigned sent = 0;
    for (uint64_t now = 0; now < 1000000000ull && !peer_gen_done(&g); now += 1000000)
        for (int k; (k = peer_gen_pick(&g, now)) >= 0; sent++)
            peer_gen_frame(&g, (unsigned)k, f, now, 0);
    assert_int_equal(sent, 7);
    assert_true(peer_gen_done(&g));
    peer_gen_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rx_streams_only),
        cmocka_unit_test(test_no_rx_stream_refused),
        cmocka_unit_test(test_frames_and_rates),
        cmocka_unit_test(test_burst_done),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
