/* tools/peer/peer_args.c: every option, suffixes, defaults, and one clear
 * error per kind of bad input. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>

#include "tools/peer/peer_opts.h"

#define ARGV(...) ((char *[]){"vnperf-peer", __VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *[]){"vnperf-peer", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(o, err, ...)                                                                         \
    peer_args_parse(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), (o), (err), sizeof(err))

static void expect_error(int rc, const char *err, const char *needle)
{
    assert_int_equal(rc, -EINVAL);
    if (!strstr(err, needle))
        fail_msg("error '%s' does not mention '%s'", err, needle);
    assert_null(strchr(err, '\n'));
}

static void test_send_all_options(void **state)
{
    struct peer_opts o;
    char err[256];
    int rc;

    (void)state;
    rc = PARSE(&o, err, "send", "--local", "127.0.0.1:0", "--remote", "127.0.0.1:5555", "--count",
               "2k", "--duration", "1.5", "--size", "1514", "--src-mac", "02:aa:BB:cc:dd:ee",
               "--dst-mac", "52:54:00:12:34:57", "--src-ip", "192.168.1.2", "--dst-ip",
               "192.168.1.3", "--src-port", "1", "--dst-port", "65535", "--stream", "7",
               "--streams", "4", "--rate", "1m", "--batch", "256", "--malformed", "bad-csum",
               "--ready-file", "/tmp/x", "--progress", "--sockbuf", "1m");
    assert_int_equal(rc, 0);
    assert_int_equal(o.mode, PEER_MODE_SEND);
    assert_int_equal(ntohs(o.remote.sin_port), 5555);
    assert_true(o.have_remote);
    assert_int_equal(o.count, 2000);
    assert_int_equal(o.duration_ns, 1500000000ull);
    assert_int_equal(o.size, 1514);
    assert_memory_equal(o.src_mac, "\x02\xaa\xbb\xcc\xdd\xee", 6);
    assert_memory_equal(o.dst_mac, "\x52\x54\x00\x12\x34\x57", 6);
    assert_int_equal(o.flow.saddr, 0xc0a80102);
    assert_int_equal(o.flow.daddr, 0xc0a80103);
    assert_int_equal(o.flow.sport, 1);
    assert_int_equal(o.flow.dport, 65535);
    assert_int_equal(o.flow.stream, 7);
    assert_int_equal(o.streams, 4);
    assert_int_equal(o.rate, 1000000);
    assert_int_equal(o.batch, 256);
    assert_int_equal(o.malformed, PEER_MAL_BAD_CSUM);
    assert_string_equal(o.ready_file, "/tmp/x");
    assert_true(o.progress);
    assert_int_equal(o.sockbuf, 1000000);
}

static void test_defaults(void **state)
{
    struct peer_opts o;
    char err[256];

    (void)state;
    assert_int_equal(PARSE(&o, err, "count", "--local", "127.0.0.1:4000"), 0);
    assert_int_equal(o.mode, PEER_MODE_COUNT);
    assert_false(o.have_remote);
    assert_int_equal(ntohs(o.local.sin_port), 4000);
    assert_int_equal(o.count, 0);
    assert_int_equal(o.duration_ns, 0);
    assert_int_equal(o.idle_ns, 0);
    assert_int_equal(o.batch, PEER_BATCH_DEFAULT);
    assert_int_equal(o.sockbuf, PEER_SOCKBUF_DEFAULT);

    assert_int_equal(PARSE(&o, err, "send", "--remote", "127.0.0.1:4000"), 0);
    assert_int_equal(ntohl(o.local.sin_addr.s_addr), INADDR_LOOPBACK);
    assert_int_equal(o.local.sin_port, 0);
    assert_int_equal(o.size, PKT_MIN_FRAME);
    assert_int_equal(o.streams, 1);
    assert_int_equal(o.rate, 0);
    assert_int_equal(o.malformed, PEER_MAL_NONE);
    assert_false(o.payload_only);
    assert_int_equal(PARSE(&o, err, "send", "--remote", "127.0.0.1:4000", "--payload-only"), 0);
    assert_true(o.payload_only);

    assert_int_equal(PARSE(&o, err, "reflect", "--local", "127.0.0.1:1", "--remote", "127.0.0.1:2",
                           "--idle", "0.25", "--verify-csum"),
                     0);
    assert_int_equal(o.idle_ns, 250000000);
    assert_true(o.verify_csum);
}

static void test_latency_counts_only(void **state)
{
    struct peer_opts o;
    char err[256];

    (void)state;
    assert_int_equal(PARSE(&o, err, "count", "--local", "127.0.0.1:1"), 0);
    assert_false(o.latency);
    assert_int_equal(PARSE(&o, err, "count", "--local", "127.0.0.1:1", "--latency"), 0);
    assert_true(o.latency);
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--latency"), err,
                 "--latency does not apply to send");
}

/* vnperf-peer-dpdk: the ports stand for --local/--remote; send with an
 * --rx-vhost port also counts (PVP). */
static void test_vhost_ports(void **state)
{
    struct peer_opts o;
    char err[256];

    (void)state;
    assert_int_equal(PARSE(&o, err, "send", "--tx-vhost", "/tmp/a.sock", "--rate", "100k"), 0);
    assert_string_equal(o.tx_vhost, "/tmp/a.sock");
    assert_null(o.rx_vhost);
    assert_int_equal(o.link_wait_ns, PEER_LINK_WAIT_DEFAULT);
    assert_false(o.start_on_usr1);
    assert_int_equal(PARSE(&o, err, "send", "--tx-vhost", "/tmp/a", "--rx-vhost", "/tmp/b",
                           "--start-on-usr1", "--link-wait", "2.5", "--latency", "--idle", "1"),
                     0);
    assert_string_equal(o.rx_vhost, "/tmp/b");
    assert_int_equal(o.link_wait_ns, 2500000000ull);
    assert_true(o.start_on_usr1 && o.latency);
    assert_int_equal(o.idle_ns, 1000000000ull);
    assert_int_equal(PARSE(&o, err, "count", "--rx-vhost", "/tmp/b", "--idle", "1"), 0);
    assert_string_equal(o.rx_vhost, "/tmp/b");
    assert_int_equal(o.warmup_ns, 0);
    assert_int_equal(
        PARSE(&o, err, "send", "--tx-vhost", "/tmp/a", "--rx-vhost", "/tmp/b", "--warmup", "0.1"),
        0);
    assert_int_equal(o.warmup_ns, 100000000ull);
    assert_int_equal(o.max_lag_ns, 0);
    assert_int_equal(
        PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--rate", "1k", "--max-lag", "0.0005"),
        0);
    assert_int_equal(o.max_lag_ns, 500000ull);
}

/* count or reflect --rx-if: every frame of an interface (a tap's host
 * end), no socket address; the name is checked, it goes into the result
 * line. */
static void test_rx_if(void **state)
{
    struct peer_opts o;
    char err[256];

    (void)state;
    assert_int_equal(PARSE(&o, err, "count", "--local", "127.0.0.1:1"), 0);
    assert_null(o.rx_if);
    assert_int_equal(PARSE(&o, err, "count", "--rx-if", "vntap0", "--idle", "1"), 0);
    assert_string_equal(o.rx_if, "vntap0");
    /* reflect: each frame back onto the interface (app reneg over tap) */
    assert_int_equal(PARSE(&o, err, "reflect", "--rx-if", "vntap0", "--verify-csum"), 0);
    assert_string_equal(o.rx_if, "vntap0");
    expect_error(PARSE(&o, err, "count", "--rx-if", "vntap0", "--local", "127.0.0.1:1"), err,
                 "no --local/--remote");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--rx-if", "vntap0"), err,
                 "--rx-if does not apply to send");
    expect_error(PARSE(&o, err, "count", "--rx-if", "a\"b"), err, "expected an interface name");
    expect_error(PARSE(&o, err, "count", "--rx-if", "sixteen-chars-xx"), err,
                 "expected an interface name");
    expect_error(PARSE(&o, err, "count", "--rx-if", "t0", "--rx-vhost", "/tmp/b"), err,
                 "--rx-if is the kernel peer's");
}

/* send --stream-file: the file's streams, counted on --local too; the
 * options that set one kind of frame or its rate refused beside it. */
static void test_stream_file(void **state)
{
    struct peer_opts o;
    char err[256];

    (void)state;
    assert_int_equal(PARSE(&o, err, "send", "--stream-file", "/tmp/s", "--local", "127.0.0.1:7",
                           "--remote", "127.0.0.1:8", "--dst-mac", "52:54:00:12:34:57",
                           "--duration", "2", "--start-on-usr1"),
                     0);
    assert_string_equal(o.stream_file, "/tmp/s");
    assert_true(o.start_on_usr1);
    expect_error(PARSE(&o, err, "send", "--stream-file", "/tmp/s", "--remote", "127.0.0.1:8"), err,
                 "--stream-file needs --local");
    expect_error(PARSE(&o, err, "send", "--stream-file", "/tmp/s", "--local", "127.0.0.1:7",
                       "--remote", "127.0.0.1:8", "--size", "60"),
                 err, "no --size");
    expect_error(PARSE(&o, err, "send", "--stream-file", "/tmp/s", "--local", "127.0.0.1:7",
                       "--remote", "127.0.0.1:8", "--rate", "10"),
                 err, "no --size, --rate");
    expect_error(PARSE(&o, err, "send", "--stream-file", "/tmp/s", "--local", "127.0.0.1:7",
                       "--remote", "127.0.0.1:8", "--malformed", "runt"),
                 err, "--malformed");
    expect_error(PARSE(&o, err, "send", "--stream-file", "/tmp/s", "--tx-vhost", "/tmp/a"), err,
                 "--stream-file is vnperf-peer's");
    expect_error(PARSE(&o, err, "count", "--stream-file", "/tmp/s", "--local", "127.0.0.1:7"), err,
                 "--stream-file does not apply to count");
    expect_error(PARSE(&o, err, "send", "--stream-file", "", "--local", "127.0.0.1:7"), err,
                 "expected a path");
    /* Over a tap: whole frames onto the interface, what it receives counted. */
    assert_int_equal(PARSE(&o, err, "send", "--stream-file", "/tmp/s", "--rx-if", "vntap0",
                           "--duration", "2", "--start-on-usr1"),
                     0);
    assert_string_equal(o.rx_if, "vntap0");
    expect_error(PARSE(&o, err, "send", "--stream-file", "/tmp/s", "--rx-if", "vntap0", "--local",
                       "127.0.0.1:7"),
                 err, "no --local/--remote");
    expect_error(PARSE(&o, err, "send", "--rx-if", "vntap0", "--size", "60"), err,
                 "--rx-if does not apply to send without --stream-file");
}

static void test_vhost_errors(void **state)
{
    struct peer_opts o;
    char err[256];

    (void)state;
    expect_error(PARSE(&o, err, "send", "--rx-vhost", "/tmp/b"), err, "needs --tx-vhost");
    expect_error(PARSE(&o, err, "count", "--tx-vhost", "/tmp/a"), err,
                 "--tx-vhost does not apply to count");
    expect_error(PARSE(&o, err, "reflect", "--rx-vhost", "/tmp/a"), err,
                 "--rx-vhost does not apply to reflect");
    expect_error(PARSE(&o, err, "send", "--tx-vhost", "/tmp/a", "--rx-vhost", "/tmp/a"), err,
                 "the same socket");
    expect_error(PARSE(&o, err, "send", "--tx-vhost", "/tmp/a", "--remote", "127.0.0.1:1"), err,
                 "take none");
    expect_error(PARSE(&o, err, "send", "--tx-vhost", "/tmp/a", "--payload-only"), err,
                 "--payload-only");
    expect_error(PARSE(&o, err, "send", "--tx-vhost", "/tmp/\"x"), err, "socket path");
    expect_error(PARSE(&o, err, "send", "--tx-vhost", "/tmp/a,queues=2"), err, "socket path");
    expect_error(PARSE(&o, err, "send", "--tx-vhost", ""), err, "socket path");
    expect_error(PARSE(&o, err, "send", "--tx-vhost", "/tmp/a", "--idle", "1"), err,
                 "--idle does not apply to send without --rx-vhost");
    expect_error(PARSE(&o, err, "send", "--tx-vhost", "/tmp/a", "--link-wait", "0"), err,
                 "--link-wait '0'");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--start-on-usr1"), err,
                 "--start-on-usr1 needs --tx-vhost, --rx-vhost or --stream-file");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--link-wait", "1"), err,
                 "--link-wait needs --tx-vhost or --rx-vhost");
    /* the warm-up's frames must come back to be waited for */
    expect_error(PARSE(&o, err, "send", "--tx-vhost", "/tmp/a", "--warmup", "0.1"), err,
                 "--warmup needs --rx-vhost");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--warmup", "0.1"), err,
                 "--warmup needs --tx-vhost and --rx-vhost");
    expect_error(PARSE(&o, err, "count", "--rx-vhost", "/tmp/b", "--warmup", "0.1"), err,
                 "--warmup does not apply to count");
    expect_error(
        PARSE(&o, err, "send", "--tx-vhost", "/tmp/a", "--rx-vhost", "/tmp/b", "--warmup", "0"),
        err, "--warmup '0'");
    expect_error(PARSE(&o, err, "send", "--tx-vhost", "/tmp/a", "--max-lag", "0.001"), err,
                 "--max-lag needs --rate");
    expect_error(PARSE(&o, err, "count", "--rx-vhost", "/tmp/b", "--max-lag", "0.001"), err,
                 "--max-lag does not apply to count");
    expect_error(
        PARSE(&o, err, "send", "--tx-vhost", "/tmp/a", "--stream", "4294967295", "--streams", "2"),
        err, "goes past");
}

static void test_help(void **state)
{
    struct peer_opts o;
    char err[256];

    (void)state;
    assert_int_equal(PARSE(&o, err, "--help"), PEER_ARGS_HELP);
    assert_int_equal(PARSE(&o, err, "count", "--local", "127.0.0.1:1", "-h"), PEER_ARGS_HELP);
}

/* send --hold: seconds; the socket sender's only. */
static void test_hold(void **state)
{
    struct peer_opts o;
    char err[256];

    (void)state;
    assert_int_equal(PARSE(&o, err, "send", "--remote", "127.0.0.1:1"), 0);
    assert_int_equal(o.hold_ns, 0);
    assert_int_equal(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--hold", "30"), 0);
    assert_int_equal(o.hold_ns, 30000000000ull);
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--hold", "0"), err,
                 "seconds > 0");
    expect_error(PARSE(&o, err, "count", "--local", "127.0.0.1:1", "--hold", "1"), err,
                 "--hold does not apply to count");
    expect_error(PARSE(&o, err, "send", "--tx-vhost", "/tmp/a", "--hold", "1"), err,
                 "--hold is the socket sender's");
}

static void test_errors(void **state)
{
    struct peer_opts o;
    char err[256];

    (void)state;
    expect_error(peer_args_parse(1, ARGV(NULL), &o, err, sizeof(err)), err, "no mode");
    expect_error(PARSE(&o, err, "sink"), err, "unknown mode 'sink'");
    expect_error(PARSE(&o, err, "count"), err, "needs --local");
    expect_error(PARSE(&o, err, "send"), err, "needs --remote");
    expect_error(PARSE(&o, err, "reflect", "--local", "127.0.0.1:1"), err, "needs --remote");
    expect_error(PARSE(&o, err, "count", "--local", "localhost:1"), err, "--local");
    expect_error(PARSE(&o, err, "count", "--local", "127.0.0.1:65536"), err, "--local");
    expect_error(PARSE(&o, err, "count", "--local", "127.0.0.1:1k"), err, "--local");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:0"), err, "port 1..65535");
    expect_error(PARSE(&o, err, "count", "--local", "127.0.0.1:1", "--size", "64"), err,
                 "--size does not apply to count");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--idle", "1"), err,
                 "--idle does not apply to send");
    expect_error(
        PARSE(&o, err, "reflect", "--local", "127.0.0.1:1", "--remote", "127.0.0.1:2", "--latency"),
        err, "--latency does not apply to reflect");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--size", "59"), err,
                 "60..9014");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--size", "9015"), err,
                 "60..9014");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--count", "0"), err,
                 "--count '0'");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--count", "-5"), err,
                 "--count '-5'");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--count", "5x"), err,
                 "--count '5x'");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--count", "99999999999g"), err,
                 "--count");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--duration", "0"), err,
                 "seconds > 0");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--duration", "nan"), err,
                 "seconds > 0");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--src-mac", "1:2:3:4:5:6"), err,
                 "xx:xx:xx:xx:xx:xx");
    expect_error(
        PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--dst-mac", "52-54-00-12-34-56"), err,
        "--dst-mac");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--src-ip", "1.2.3"), err,
                 "--src-ip");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--dst-port", "0"), err,
                 "--dst-port");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--streams", "4097"), err,
                 "1..4096");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--stream", "4294967295",
                       "--streams", "2"),
                 err, "goes past");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--batch", "0"), err, "1..256");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--malformed", "none"), err,
                 "truncated");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--rate", "0"), err, "--rate");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--ready-file", ""), err,
                 "expected a path");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--sockbuf", "100"), err,
                 "--sockbuf");
    expect_error(
        PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--payload-only", "--malformed", "runt"),
        err, "cannot send --malformed");
    expect_error(PARSE(&o, err, "count", "--local", "127.0.0.1:1", "--payload-only"), err,
                 "--payload-only does not apply to count");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "--nope"), err,
                 "unknown option '--nope'");
    expect_error(PARSE(&o, err, "send", "--remote"), err, "'--remote' needs a value");
    expect_error(PARSE(&o, err, "send", "--remote", "127.0.0.1:1", "extra"), err,
                 "unexpected argument 'extra'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_send_all_options),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_latency_counts_only),
        cmocka_unit_test(test_vhost_ports),
        cmocka_unit_test(test_rx_if),
        cmocka_unit_test(test_vhost_errors),
        cmocka_unit_test(test_stream_file),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_hold),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
