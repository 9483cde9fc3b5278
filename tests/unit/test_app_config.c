/* apps/app_config.c: the keys whose values the layers above the kernel
 * check (app=, features=, rate=, imix=, flows=), after the kernel's
 * parser, in the parser's error format. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>

#include "apps/app_config.h"
#include "kernel/config.h"

static struct app_config c;
static char err[256];

static int parse_and_check(const char *line)
{
    int rc = app_config_parse(&c, line, strlen(line), err, sizeof(err));
    return rc < 0 ? rc : app_config_check(&c, err, sizeof(err));
}

static void defaults_pass(void **state)
{
    (void)state;
    assert_int_equal(parse_and_check(""), 0);
    assert_int_equal(parse_and_check("app=gen features=-event_idx,-ring_packed rate=10k "
                                     "imix=64:7,1518:1 flows=sport:1000-1003,random"),
                     0);
}

/* stream_s=: app=reneg's TCP stream per set, at most a minute (the
 * unit tests' app table has no reneg: the keys alone). */
static void reneg_stream_s(void **state)
{
    (void)state;
    if (parse_and_check("sets=all/-event_idx count=10 stream_s=60") != 0)
        fail_msg("%s", err);
    assert_int_equal(c.stream_s, 60);
    err[0] = '\0';
    assert_int_equal(parse_and_check("sets=all count=10 stream_s=61"), -EINVAL);
    assert_non_null(strstr(err, "stream_s"));
}

/* dst_ip6= is on-link through ip6='s /64, and not ip6= itself. */
static void ip6_pair(void **state)
{
    (void)state;
    assert_int_equal(parse_and_check("ip6=fd00::2 dst_ip6=fd00::1"), 0);
    assert_int_equal(parse_and_check("ip6=fd00::2"), 0);
    static const struct {
        const char *line, *why;
    } bad[] = {
        {"dst_ip6=fd00::1", "needs ip6="},
        {"ip6=fd00::2 dst_ip6=fd01::1", "/64"},
        {"ip6=fd00::2 dst_ip6=fd00:0:0:0::2", "our own"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        if (parse_and_check(bad[i].line) != -EINVAL || !strstr(err, bad[i].why))
            fail_msg("'%s': error '%s' lacks '%s'", bad[i].line, err, bad[i].why);
    }
}

/* netif_vlan=: a VID 1..4094 on lwIP's apps; netif_pcp= and netif_svlan=
 * (a VID too) with it. */
static void netif_vlan(void **state)
{
    (void)state;
    assert_int_equal(parse_and_check("app=iperf netif_vlan=100"), 0);
    assert_int_equal(c.netif_vlan, 100);
    assert_int_equal(parse_and_check("app=rr netif_vlan=4094 netif_pcp=7"), 0);
    assert_int_equal(c.netif_pcp, 7);
    assert_int_equal(parse_and_check("app=rr netif_vlan=100 netif_svlan=4094"), 0);
    assert_int_equal(c.netif_svlan, 4094);
    static const struct {
        const char *line, *why;
    } bad[] = {
        {"app=iperf netif_vlan=4095", "netif_vlan=4095"},
        {"app=iperf netif_vlan=100 netif_pcp=8", "netif_pcp=8"},
        {"app=iperf netif_pcp=3", "netif_pcp= needs netif_vlan="},
        {"app=gen netif_vlan=100", "app=gen builds its own frames"},
        {"app=rr netif_svlan=200", "netif_svlan= needs netif_vlan="},
        {"app=rr netif_vlan=100 netif_svlan=4095", "netif_svlan=4095"},
        {"app=rr netif_vlan=100 netif_svlan=x", "netif_svlan=x"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        if (parse_and_check(bad[i].line) != -EINVAL || !strstr(err, bad[i].why))
            fail_msg("'%s': error '%s' lacks '%s'", bad[i].line, err, bad[i].why);
    }
}

/* vnperf conform's combination with every switchable feature off
 * (docs/conform.md): longer than the 127 characters of other values. */
static void every_feature_off_fits(void **state)
{
    (void)state;
    assert_int_equal(parse_and_check("features=-csum,-guest_csum,-host_tso4,-host_tso6,-guest_tso4,"
                                     "-guest_tso6,-mtu,-mac,-mrg_rxbuf,-status,-ctrl_vq,-mq,-rss,"
                                     "-event_idx,-ring_packed,-in_order,-version_1,-ring_reset,"
                                     "-notification_data,-host_uso,-guest_uso4,-guest_uso6,"
                                     "-hash_report,-ctrl_rx,-ctrl_vlan,-ctrl_mac_addr,"
                                     "-guest_announce"),
                     0);
}

static void errors(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        const char *must_contain[3];
    } cases[] = {
        {"app=nosuch", {"config: app=nosuch", "selftest|gen", NULL}},
        {"features=-warp_drive", {"features=-warp_drive", "event_idx", "ring_packed"}},
        {"rate=fast", {"config: rate=fast", NULL, NULL}},
        {"imix=64:0", {"config: imix=64:0", NULL, NULL}},
        {"flows=bogus", {"config: flows=bogus", NULL, NULL}},
        /* issue 31 F16: accepted while src_port=0 is refused */
        /* issue 31 F7: the last sip: and seq won silently */
        {"flows=sip:10.0.0.7-10.0.0.8,sip:10.0.0.9,random,seq",
         {"config: flows=sip:10.0.0.7", "'sip:10.0.0.9': sip given twice", NULL}},
        {"flows=sport:0-1", {"config: flows=sport:0-1: 'sport:0-1'", "ports are 1..65535", NULL}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        err[0] = '\0';
        if (parse_and_check(cases[i].line) != -EINVAL)
            fail_msg("'%s' passed", cases[i].line);
        for (int k = 0; k < 3 && cases[i].must_contain[k]; k++)
            if (!strstr(err, cases[i].must_contain[k]))
                fail_msg("'%s': error '%s' lacks '%s'", cases[i].line, err,
                         cases[i].must_contain[k]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_pass),          cmocka_unit_test(errors),
        cmocka_unit_test(every_feature_off_fits), cmocka_unit_test(ip6_pair),
        cmocka_unit_test(reneg_stream_s),         cmocka_unit_test(netif_vlan),
    };
    return cmocka_run_group_tests_name("app_config", tests, NULL, NULL);
}
