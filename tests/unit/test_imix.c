/* apps/imix.c and apps/flows.c: parsing, the size sequence, flow expansion. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "apps/flows.h"
#include "apps/imix.h"

static void test_imix_parse(void **st)
{
    (void)st;
    struct imix m;
    char why[200];
    assert_int_equal(imix_parse("64:7,594:4,1518:1", 1514, &m, why, sizeof(why)), 0);
    assert_int_equal(m.n, 3);
    assert_int_equal(m.size[0], 60);
    assert_int_equal(m.size[2], 1514);
    assert_int_equal(m.cycle, 12);
    assert_int_equal(imix_parse("simple", 1514, &m, why, sizeof(why)), 0);
    assert_int_equal(m.cycle, 12);
    static const char *bad[] = {"",
                                "64",
                                "64:",
                                "64:0",
                                "63:1",
                                "1519:1",
                                "64:1,",
                                "a:1",
                                "64:1;128:1",
                                "64:1,128:1,192:1,256:1,320:1,384:1,448:1,512:1,576:1",
                                "64:4000,128:100"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        why[0] = 0;
        assert_int_equal(imix_parse(bad[i], 1514, &m, why, sizeof(why)), -EINVAL);
        assert_true(why[0] != 0);
    }
    assert_int_equal(imix_parse("9018:1", 9014, &m, why, sizeof(why)), 0);
    /* A device MTU near 65535 (frame limit above 16 bits): 65549 was
     * stored as a 13-byte frame. */
    assert_int_equal(imix_parse("65549:1", 65549, &m, why, sizeof(why)), -EINVAL);
    assert_int_equal(imix_parse("65539:1", 65549, &m, why, sizeof(why)), 0);
    assert_int_equal(m.size[0], 65535);
    assert_int_equal(imix_check("", why, sizeof(why)), 0);
    assert_int_equal(imix_check("9018:1", why, sizeof(why)), -EINVAL);
}

static void test_imix_sequence(void **st)
{
    (void)st;
    struct imix m;
    char why[200];
    uint8_t seq[IMIX_MAX_WEIGHT];
    assert_int_equal(imix_parse("64:7,594:4,1518:1", 1514, &m, why, sizeof(why)), 0);
    imix_sequence(&m, seq);
    unsigned cnt[IMIX_MAX_SIZES] = {0};
    for (unsigned i = 0; i < m.cycle; i++)
        cnt[seq[i]]++;
    assert_int_equal(cnt[0], 7);
    assert_int_equal(cnt[1], 4);
    assert_int_equal(cnt[2], 1);
    /* Spread: the heavy size never comes more than twice in a row. */
    for (unsigned i = 0; i + 2 < m.cycle; i++)
        assert_false(seq[i] == 0 && seq[i + 1] == 0 && seq[i + 2] == 0);
}

static void test_flows(void **st)
{
    (void)st;
    struct flows_spec fs;
    char why[300];
    static struct pkt_flow out[FLOWS_MAX];
    const struct pkt_flow base = {0x0a000001, 0x0a000002, 1000, 2000, 0};
    assert_int_equal(flows_parse("", &fs, why, sizeof(why)), 0);
    assert_int_equal(flows_expand(&fs, &base, out), 1);
    assert_int_equal(out[0].saddr, base.saddr);
    assert_int_equal(out[0].dport, 2000);

    assert_int_equal(
        flows_parse("sip:10.0.0.1-10.0.0.4,dport:5000-5002,random", &fs, why, sizeof(why)), 0);
    assert_true(fs.random);
    assert_int_equal(flows_expand(&fs, &base, out), 12);
    assert_int_equal(out[0].dport, 5000);
    assert_int_equal(out[1].dport, 5001);
    assert_int_equal(out[3].saddr, 0x0a000002);
    assert_int_equal(out[11].saddr, 0x0a000004);
    assert_int_equal(out[11].dport, 5002);
    assert_int_equal(out[11].stream, 11);
    assert_int_equal(out[11].daddr, base.daddr);
    assert_int_equal(out[11].sport, base.sport);

    static const char *bad[] = {
        "sip:10.0.0.4-10.0.0.1", "sport:1-2000", "dport:70000", "sip:10.0.0.256", "foo:1",
        "sport:1-32,dport:1-33", "sport:5,",     "sip:10.0.0"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(flows_check(bad[i], why, sizeof(why)), -EINVAL);
    assert_int_equal(flows_check("sport:1-32,dport:1-32,seq", why, sizeof(why)), 0);
}

static void expect_flows_bad(const char *s, const char *reason)
{
    struct flows_spec fs;
    char why[160] = "";
    assert_int_equal(flows_parse(s, &fs, why, sizeof(why)), -EINVAL);
    if (!strstr(why, reason))
        fail_msg("flows=%s: '%s' lacks '%s'", s, why, reason);
}

/* Issue 31 F16: sport:0-1 passed while src_port=0 is refused. */
static void test_flows_port_zero(void **st)
{
    (void)st;
    expect_flows_bad("sport:0-1", "ports are 1..65535");
    expect_flows_bad("dport:0", "ports are 1..65535");
    expect_flows_bad("sport:5,dport:0-3", "ports are 1..65535");
    struct flows_spec fs;
    char why[160];
    assert_int_equal(flows_parse("sport:1-2,dport:65535", &fs, why, sizeof(why)), 0);
    assert_int_equal(fs.sport_lo, 1);
    assert_int_equal(fs.dport_lo, 65535);
}

/* Issue 31 F7: the last of a repeated field won silently
 * (sip:10.0.0.7-10.0.0.8,sip:10.0.0.9,random,seq ran one flow in
 * sequence); each field, and the mode, is given at most once. */
static void test_flows_fields_once(void **st)
{
    (void)st;
    expect_flows_bad("sip:10.0.0.7-10.0.0.8,sip:10.0.0.9,random,seq", "sip given twice");
    expect_flows_bad("dip:10.0.0.1,dip:10.0.0.1", "dip given twice");
    expect_flows_bad("sport:1,dport:2,sport:3", "sport given twice");
    expect_flows_bad("dport:7,dport:8-9", "dport given twice");
    expect_flows_bad("random,seq", "seq|random given twice");
    expect_flows_bad("seq,random", "seq|random given twice");
    expect_flows_bad("random,random", "seq|random given twice");
    struct flows_spec fs;
    char why[160];
    assert_int_equal(
        flows_parse("sip:10.0.0.1,dip:10.0.0.2,sport:1,dport:2,random", &fs, why, sizeof(why)), 0);
    assert_true(fs.random);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_imix_parse),
        cmocka_unit_test(test_imix_sequence),
        cmocka_unit_test(test_flows),
        cmocka_unit_test(test_flows_port_zero),
        cmocka_unit_test(test_flows_fields_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
