/* apps/reneg_sets.c: app=reneg's sets= list, every error one line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "apps/reneg_sets.h"
#include "drivers/virtio/virtio.h"
#include "drivers/virtio/vnet.h"

#define BIT(b) VIRTIO_BIT(b)

static void test_three_sets(void **st)
{
    (void)st;
    struct reneg_set s[RENEG_SETS_MAX];
    char why[200] = "";
    int n = reneg_sets_parse("all/-event_idx,-ring_packed/-mrg_rxbuf,indirect:off", s,
                             RENEG_SETS_MAX, why, sizeof(why));
    assert_int_equal(n, 3);
    assert_string_equal(s[0].text, "all");
    assert_true(s[0].features_off == 0);
    assert_int_equal(s[0].indirect, VNET_INDIRECT_AUTO);
    assert_true(s[1].features_off == (BIT(VIRTIO_F_EVENT_IDX) | BIT(VIRTIO_F_RING_PACKED)));
    assert_string_equal(s[1].text, "-event_idx,-ring_packed");
    assert_true(s[2].features_off == BIT(VIRTIO_NET_F_MRG_RXBUF));
    assert_int_equal(s[2].indirect, VNET_INDIRECT_OFF);
    assert_int_equal(reneg_sets_parse("indirect:on", s, RENEG_SETS_MAX, why, sizeof(why)), 1);
    assert_int_equal(s[0].indirect, VNET_INDIRECT_ON);
    assert_int_equal(reneg_sets_check("", why, sizeof(why)), 0);
    assert_int_equal(reneg_sets_check("all/all", why, sizeof(why)), 0);
}

/* vnperf conform's longest sets: every feature QEMU's tap offers off
 * (its "none" combination), more than once in one sets= value. */
static void test_long_sets(void **st)
{
    (void)st;
    static const char none[] =
        "-csum,-guest_csum,-host_tso4,-host_tso6,-guest_tso4,-guest_tso6,-mtu,-mac,-mrg_rxbuf,"
        "-status,-ctrl_vq,-event_idx,-ring_packed,-ring_reset,-ctrl_rx,-ctrl_vlan,"
        "-ctrl_mac_addr,-guest_announce,-speed_duplex,indirect:off";
    static char val[3 * sizeof(none) + 8];
    snprintf(val, sizeof(val), "%s/all/%s/%s", none, none, none);
    struct reneg_set s[RENEG_SETS_MAX];
    char why[300] = "";
    assert_int_equal(reneg_sets_parse(val, s, RENEG_SETS_MAX, why, sizeof(why)), 4);
    assert_string_equal(s[3].text, none);
    assert_true(s[3].features_off & BIT(VIRTIO_NET_F_SPEED_DUPLEX));
    assert_int_equal(s[3].indirect, VNET_INDIRECT_OFF);
    char lng[sizeof(s[0].text) + 12] = "";
    while (strlen(lng) < sizeof(s[0].text))
        strcat(lng, "-event_idx,");
    strcat(lng, "-mtu");
    assert_int_equal(reneg_sets_parse(lng, s, RENEG_SETS_MAX, why, sizeof(why)), -EINVAL);
    assert_string_equal(why, "set 1 is longer than 383 characters");
}

static void test_every_error(void **st)
{
    (void)st;
    static const struct {
        const char *val, *why;
    } bad[] = {
        {"", "no sets"},
        {"all/", "set 2 is empty"},
        {"/all", "set 1 is empty"},
        {"all//all", "set 2 is empty"},
        {"all/all/all/all/all/all/all/all/all", "more than 8 sets"},
        {"-event_idx,", "set 1: an empty word"},
        {",-event_idx", "set 1: an empty word"},
        {"-event_idx,,-mrg_rxbuf", "set 1: an empty word"},
        {"all,-event_idx", "set 1: all: a word is -NAME"},
        {"event_idx", "set 1: event_idx: a word is -NAME"},
        {"all/-nosuch", "set 2: -nosuch: "},
        {"indirect:maybe", "set 1: indirect:maybe: indirect: takes on, off or auto"},
        {"indirect:", "set 1: indirect:: a word is -NAME"},
        {"indirect:on,indirect:off", "set 1: indirect: given twice"},
    };
    struct reneg_set s[RENEG_SETS_MAX];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char why[300] = "";
        assert_int_equal(reneg_sets_parse(bad[i].val, s, RENEG_SETS_MAX, why, sizeof(why)),
                         -EINVAL);
        if (strncmp(why, bad[i].why, strlen(bad[i].why)) != 0)
            fail_msg("%s: got '%s', want '%s...'", bad[i].val, why, bad[i].why);
        assert_null(strchr(why, '\n'));
        if (bad[i].val[0])
            assert_int_equal(reneg_sets_check(bad[i].val, why, sizeof(why)), -EINVAL);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_three_sets),
        cmocka_unit_test(test_long_sets),
        cmocka_unit_test(test_every_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
