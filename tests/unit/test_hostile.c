/* app=hostile's catalogue (apps/hostile_cases.c): every ring case's
 * layout built through virtq_raw.h on a split queue the simulated device
 * reads, whose checker (sim_check.c) must find exactly the violation the
 * case names; the setup cases against the simulated transport; case=
 * parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "apps/hostile.h"
#include "kernel/mem.h"
#include "sim_check.h"
#include "sim_virtio.h"

#define RX_SLOT 2048u

struct fix {
    struct virtq *vq;
    struct sim_queue q;
    struct hostile_env e;
    uint8_t *rxmem;
    struct simchk_mem mem[3];
    struct simchk_env env;
};

static void ring_none(const struct virtq_doorbell *db, uint32_t val)
{
    (void)db;
    (void)val;
}

/* A split queue of num entries as the app has it after bring-up: on RX,
 * every slot posted device-writable. */
static struct fix *fix_new(uint16_t num, bool rx)
{
    struct fix *f = mem_alloc_dma(sizeof(*f), 64);
    unsigned flags = VIRTQ_F_EVENT_IDX | VIRTQ_F_INDIRECT;
    assert_int_equal(virtq_create(&f->vq, rx ? 0 : 1, num, flags), 0);
    f->q.max = num;
    simq_attach(&f->q, num, virtq_desc_addr(f->vq), virtq_driver_addr(f->vq),
                virtq_device_addr(f->vq), flags);
    struct virtq_doorbell db = {ring_none, 0, f, rx ? 0 : 1, false};
    virtq_set_doorbell(f->vq, &db);
    f->e = (struct hostile_env){.vq = f->vq, .features = VIRTIO_BIT(VIRTIO_F_VERSION_1), .txq = 1};
    f->e.buf = mem_alloc_dma(HOSTILE_BUF, 64);
    f->e.tab = mem_alloc_dma(HOSTILE_TAB_ENTS * sizeof(struct virtq_raw_desc), 64);
    memset(f->e.buf + HOSTILE_HDR, 0x5a, HOSTILE_BUF - HOSTILE_HDR);
    f->rxmem = mem_alloc_dma((size_t)num * RX_SLOT, 64);
    if (rx) {
        for (uint16_t i = 0; i < num; i++) {
            struct virtq_buf b = {(uintptr_t)f->rxmem + (uintptr_t)i * RX_SLOT, RX_SLOT, i};
            assert_int_equal(virtq_add_bufs(f->vq, &b, 1, true), 1);
        }
    }
    uint64_t buf = (uintptr_t)f->e.buf, tab = (uintptr_t)f->e.tab, rxm = (uintptr_t)f->rxmem;
    f->mem[0] = (struct simchk_mem){buf, buf + HOSTILE_BUF};
    f->mem[1] = (struct simchk_mem){tab, tab + HOSTILE_TAB_ENTS * 16u};
    f->mem[2] = (struct simchk_mem){rxm, rxm + (uint64_t)num * RX_SLOT};
    f->env = (struct simchk_env){f->mem, 3, rx, 1500, *(const uint16_t *)&f->q.used->ring[num]};
    return f;
}

static int teardown(void **state)
{
    (void)state;
    sim_free_all();
    return 0;
}

/* Each ring case at the app's ring size and a small one: the checker
 * finds exactly the case's violation, the clean layout none. */
static void test_ring_cases_break_exactly_their_rule(void **state)
{
    (void)state;
    static const uint16_t sizes[] = {16, 256};
    unsigned ran = 0;
    for (unsigned s = 0; s < 2; s++) {
        struct fix *clean = fix_new(sizes[s], false);
        assert_int_equal(hostile_valid(&clean->e), 0);
        assert_int_equal(simchk_split(&clean->q, &clean->env), 0);
        for (unsigned i = 0; i < hostile_ncases; i++) {
            const struct hostile_case *c = &hostile_cases[i];
            if (c->kind == HK_SETUP)
                continue;
            struct fix *f = fix_new(sizes[s], c->kind == HK_RX);
            assert_int_equal(c->build(&f->e), 0);
            uint32_t want = c->viol == HV_NONE ? 0 : 1u << c->viol;
            uint32_t got = simchk_split(&f->q, &f->env);
            if (got != want)
                fail_msg("%s (size %u): checker found 0x%x, the case names 0x%x", c->name, sizes[s],
                         got, want);
            ran++;
        }
        sim_free_all();
    }
    assert_true(ran >= 2 * 25);
}

/* Every violation the checker knows is some case's. */
static void test_every_violation_has_a_case(void **state)
{
    (void)state;
    uint32_t named = 0;
    for (unsigned i = 0; i < hostile_ncases; i++)
        named |= 1u << hostile_cases[i].viol;
    assert_int_equal(named | 1u, (1u << HV_COUNT) - 1u);
}

static struct fix *setup_fix(struct sim_dev **sd, uint8_t status)
{
    uint64_t offered = VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_F_EVENT_IDX);
    *sd = sim_new(offered, 256, false);
    struct fix *f = fix_new(256, false);
    f->e.vdev = &(*sd)->vdev;
    f->e.features = offered;
    (*sd)->driver_features = offered;
    (*sd)->status = status;
    return f;
}

static const struct hostile_case *named(const char *name)
{
    const struct hostile_case *c = hostile_find(name, (unsigned)strlen(name));
    assert_non_null(c);
    return c;
}

static void test_setup_cases_do_what_they_say(void **state)
{
    (void)state;
    struct sim_dev *sd;
    const uint8_t live = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
                         VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK;
    struct fix *f = setup_fix(&sd, live);
    assert_int_equal(named("features_unoffered")->build(&f->e), 0);
    assert_true(sd->driver_features & ~sd->offered);
    assert_false(sd->status & VIRTIO_STATUS_FEATURES_OK); /* the sim refuses, as it may */

    f = setup_fix(&sd, live);
    assert_int_equal(named("features_after_ok")->build(&f->e), 0);
    assert_int_equal(sd->driver_features ^ sd->offered, VIRTIO_BIT(VIRTIO_F_EVENT_IDX));
    assert_int_equal(sd->status, live);
    assert_int_equal(simchk_split(&f->q, &f->env), 0);

    f = setup_fix(&sd, live);
    assert_int_equal(named("reset_inflight")->build(&f->e), 0);
    assert_int_equal(simq_pending(&f->q), 128);
    assert_int_equal(sd->status, 0);

    f = setup_fix(&sd, live);
    assert_int_equal(named("queue_size_bad")->build(&f->e), -EINVAL); /* sim: above its max */
}

static void test_case_lists(void **state)
{
    (void)state;
    char why[96];
    assert_int_equal(hostile_check("all", why, sizeof(why)), 0);
    assert_int_equal(hostile_check("chain_loop,runt", why, sizeof(why)), 0);
    assert_int_equal(hostile_check("chain_loop,nope", why, sizeof(why)), -EINVAL);
    assert_non_null(strstr(why, "'nope'"));
    assert_int_equal(hostile_check("chain_loop,", why, sizeof(why)), -EINVAL);
    assert_null(hostile_find("chain", 5));
    for (unsigned i = 0; i < hostile_ncases; i++)
        assert_true(hostile_cases[i].spec[0] == 's' && hostile_cases[i].allows[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_ring_cases_break_exactly_their_rule, teardown),
        cmocka_unit_test_teardown(test_every_violation_has_a_case, teardown),
        cmocka_unit_test_teardown(test_setup_cases_do_what_they_say, teardown),
        cmocka_unit_test_teardown(test_case_lists, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
