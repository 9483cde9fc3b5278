/* tools/rrserver: the options and the request parsing (rrs_args.c,
 * rrs_req.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <sys/socket.h>

#include "tools/rrserver/rrs.h"

static int parse(struct rrs_opts *o, const char *name, const char *val)
{
    char *argv[] = {"vnperf-rrserver", (char *)name, (char *)val, NULL};
    char err[256] = "";
    int rc = rrs_args(3, argv, o, err, sizeof(err));
    if (rc)
        assert_non_null(strstr(err, "bad option"));
    return rc;
}

static void test_args_ok(void **state)
{
    (void)state;
    struct rrs_opts o;
    char *argv[] = {"s",  "--proto", "tcp",  "--port", "12865",     "--req",
                    "64", "--resp",  "2000", "--bind", "127.0.0.1", NULL};
    char err[256];
    assert_int_equal(rrs_args(11, argv, &o, err, sizeof(err)), 0);
    assert_int_equal(o.proto, RRS_TCP);
    assert_int_equal(o.port, 12865);
    assert_int_equal(o.req, 64);
    assert_int_equal(o.resp, 2000);
    assert_int_equal(rrs_id_len(&o), 8);
    assert_int_equal(parse(&o, "--port", "65535"), 0);
    assert_int_equal(o.port, 65535);
}

/* --bind takes an IPv6 address too (rr over IPv6, --ip6), and says which. */
static int bind_to(struct rrs_opts *o, const char *addr)
{
    char *argv[] = {"vnperf-rrserver", "--port", "9000", "--bind", (char *)addr, NULL};
    char err[256] = "";
    int rc = rrs_args(5, argv, o, err, sizeof(err));
    if (rc)
        assert_non_null(strstr(err, "--bind IPV4|IPV6"));
    return rc;
}

static void test_args_bind_family(void **state)
{
    (void)state;
    struct rrs_opts o;
    assert_int_equal(bind_to(&o, "fd00:766e::1"), 0);
    assert_int_equal(o.family, AF_INET6);
    assert_string_equal(o.bind, "fd00:766e::1");
    assert_int_equal(bind_to(&o, "::1"), 0);
    assert_int_equal(o.family, AF_INET6);
    assert_int_equal(bind_to(&o, "10.0.0.1"), 0);
    assert_int_equal(o.family, AF_INET);
    assert_int_equal(bind_to(&o, "fd00::1::2"), -1);
    assert_int_equal(bind_to(&o, "[::1]"), -1);
}

/* Found by fuzz_rrs_args: strtoul skips leading white space and takes a
 * sign, so " 80", "\t80" and "+80" were ports. A number is digits. */
static void test_args_number_is_digits(void **state)
{
    (void)state;
    struct rrs_opts o;
    assert_int_equal(parse(&o, "--port", " 80"), -1);
    assert_int_equal(parse(&o, "--port", "\t80"), -1);
    assert_int_equal(parse(&o, "--port", "+80"), -1);
    assert_int_equal(parse(&o, "--req", " -1"), -1);
    assert_int_equal(parse(&o, "--resp", "+1"), -1);
    assert_int_equal(parse(&o, "--port", "0"), -1);
    assert_int_equal(parse(&o, "--port", "65536"), -1);
    assert_int_equal(parse(&o, "--req", "65001"), -1);
    assert_int_equal(parse(&o, "--port", "80 "), -1);
    assert_int_equal(parse(&o, "--port", ""), -1);
}

static void test_args_missing(void **state)
{
    (void)state;
    struct rrs_opts o;
    char err[256];
    char *one[] = {"s", "--port", NULL};
    assert_int_equal(rrs_args(2, one, &o, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "needs a value"));
    char *none[] = {"s", "--proto", "udp", NULL};
    assert_int_equal(rrs_args(3, none, &o, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "--port is required"));
}

/* A stream owes one answer per req bytes, however the reads split it. */
static void test_stream(void **state)
{
    (void)state;
    struct rrs_opts o = {RRS_TCP, "0.0.0.0", 1, 100, 1, NULL, AF_INET};
    struct rrs_stream s = {0, 0};
    struct rrs_stats st = {0};
    rrs_stream_add(&o, &s, 99, &st);
    assert_int_equal(s.owed, 0);
    assert_int_equal(s.got, 99);
    rrs_stream_add(&o, &s, 1, &st);
    assert_int_equal(s.owed, 1);
    assert_int_equal(s.got, 0);
    rrs_stream_add(&o, &s, 65536, &st);
    assert_int_equal(s.owed, 1 + 655);
    assert_int_equal(s.got, 36);
    assert_int_equal(st.req_bytes, 65636);
    rrs_stream_add(&o, &s, 0, &st);
    assert_int_equal(s.owed, 656);
}

static void test_udp_answer(void **state)
{
    (void)state;
    struct rrs_opts o = {RRS_UDP, "0.0.0.0", 1, 100, 1000, NULL, AF_INET};
    struct rrs_stats st = {0};
    uint8_t in[100], out[RRS_ID_LEN + 1];
    for (unsigned i = 0; i < sizeof(in); i++)
        in[i] = (uint8_t)(i + 1);
    memset(out, 0xee, sizeof(out));
    rrs_udp_answer(&o, in, 3, out, &st);
    const uint8_t want[] = {1, 2, 3, 0, 0, 0, 0, 0, 0xee};
    assert_memory_equal(out, want, sizeof(want));
    assert_int_equal(st.short_msgs, 1);
    rrs_udp_answer(&o, in, 100, out, &st);
    const uint8_t full[] = {1, 2, 3, 4, 5, 6, 7, 8, 0xee};
    assert_memory_equal(out, full, sizeof(full));
    assert_int_equal(st.short_msgs, 1);
    assert_int_equal(st.req_bytes, 103);
    o.resp = 2; /* the id is at most resp bytes */
    memset(out, 0xee, sizeof(out));
    rrs_udp_answer(&o, in, 0, out, &st);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 0);
    assert_int_equal(out[2], 0xee);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_args_ok),
        cmocka_unit_test(test_args_bind_family),
        cmocka_unit_test(test_args_number_is_digits),
        cmocka_unit_test(test_args_missing),
        cmocka_unit_test(test_stream),
        cmocka_unit_test(test_udp_answer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
