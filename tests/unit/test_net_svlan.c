/* net/net_vlan.c's service tag (netif_svlan=, QinQ): pushed in front of
 * lwIP's 802.1Q tag as net_linkoutput sends it, popped before lwIP sees a
 * frame; another TPID, another VID or a cut tag dropped and counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "net/net_vlan.h"

/* lwIP's frame as ethernet_output writes it: MACs, 802.1Q PCP 3 VID 100,
 * IPv4, a few payload bytes. */
static const uint8_t lwip_frame[] = {
    0x52, 0x54, 0,    0,    0,    2,    0x52, 0x54, 0,  0, 0, 1, 0x81,
    0x00, 0x60, 0x64, 0x08, 0x00, 0x45, 0,    0,    20, 1, 2, 3, 4,
};
#define N sizeof(lwip_frame)

/* On the wire: the MACs, 802.1ad PCP 3 VID 200, then lwIP's tag on. */
static const uint8_t qinq_frame[N + 4] = {
    0x52, 0x54, 0,    0,    0,    2,    0x52, 0x54, 0, 0, 0,  1, 0x88, 0xa8, 0x60,
    0xc8, 0x81, 0x00, 0x60, 0x64, 0x08, 0x00, 0x45, 0, 0, 20, 1, 2,    3,    4,
};

static void push_writes_the_service_tag(void **st)
{
    (void)st;
    struct net_vlan s;
    net_vlan_set(&s, 200, 3);
    uint8_t f[N + 4];
    memcpy(f + 4, lwip_frame, N); /* the 4 bytes in front: the pbuf's headroom */
    net_svlan_push(&s, f);
    assert_memory_equal(f, qinq_frame, sizeof(f));
}

static void pop_takes_it_off(void **st)
{
    (void)st;
    struct net_vlan s;
    net_vlan_set(&s, 200, 0); /* the VID alone decides, not the priority */
    uint8_t f[N + 4];
    memcpy(f, qinq_frame, sizeof(f));
    assert_true(net_svlan_pop(&s, f, sizeof(f)));
    assert_memory_equal(f + 4, lwip_frame, N);
    assert_int_equal(s.dropped, 0);
}

/* Not ours: another service VID, an 802.1Q outer TPID, an untagged
 * frame, a cut tag; each counted, none changed. */
static void pop_drops_and_counts(void **st)
{
    (void)st;
    struct net_vlan s;
    net_vlan_set(&s, 200, 0);
    /* VID 201; an 802.1Q outer tag; the pre-standard QinQ TPID; untagged */
    static const struct {
        unsigned at;
        uint16_t v;
    } bad[] = {{14, 0x60c9}, {12, 0x8100}, {12, 0x9100}, {12, 0x0800}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint8_t f[N + 4], before[N + 4];
        memcpy(f, qinq_frame, sizeof(f));
        f[bad[i].at] = (uint8_t)(bad[i].v >> 8);
        f[bad[i].at + 1] = (uint8_t)bad[i].v;
        memcpy(before, f, sizeof(f));
        assert_false(net_svlan_pop(&s, f, sizeof(f)));
        assert_memory_equal(f, before, sizeof(f));
        assert_int_equal(s.dropped, i + 1);
    }
    uint8_t f[N + 4];
    memcpy(f, qinq_frame, sizeof(f));
    assert_false(net_svlan_pop(&s, f, 17));
    assert_int_equal(s.dropped, 5);
    assert_true(net_svlan_pop(&s, f, 18));
    assert_int_equal(s.dropped, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(push_writes_the_service_tag),
        cmocka_unit_test(pop_takes_it_off),
        cmocka_unit_test(pop_drops_and_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
