/* apps/reneg_sets.c: app=reneg's sets= list, every error one line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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
        {"-event_idx,-event_idx,-event_idx,-event_idx,-event_idx,-event_idx,-event_idx,"
         "-event_idx,-event_idx,-event_idx",
         "set 1 is longer than 95 characters"},
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
        cmocka_unit_test(test_every_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
