/* kernel/tsc_cal.c against a simulated clock: a TSC and a reference
 * counter (PIT or PM timer) derived from one time in picoseconds, each
 * read taking time, some of them stalled (a host that deschedules the
 * guest); the boot's work between start and finish is time jumped over. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/tsc_cal.h"

#define PS_PER_S 1000000000000ull
#define TSC_HZ   2096006000ull

static struct {
    uint64_t t_ps;
    uint64_t tsc_hz;
    uint32_t ref_hz;
    bool down;
    uint32_t mask;
    uint64_t read_ps;  /* each counter read */
    uint64_t stall_ps; /* added to every stall_every-th read */
    unsigned stall_every;
    unsigned reads;
    bool dead; /* the counter does not move */
} sim;

static uint64_t sim_tsc(void)
{
    sim.t_ps += 10000; /* 10 ns */
    return (uint64_t)((unsigned __int128)sim.t_ps * sim.tsc_hz / PS_PER_S);
}

static uint32_t sim_read(void)
{
    sim.reads++;
    sim.t_ps += sim.read_ps / 2;
    if (sim.stall_every && sim.reads % sim.stall_every == 0)
        sim.t_ps += sim.stall_ps;
    uint64_t n = sim.dead ? 0 : (uint64_t)((unsigned __int128)sim.t_ps * sim.ref_hz / PS_PER_S);
    sim.t_ps += sim.read_ps - sim.read_ps / 2;
    return (uint32_t)(sim.down ? -n : n) & sim.mask;
}

static struct tsc_cal_ref ref;

static void sim_setup(bool pit)
{
    memset(&sim, 0, sizeof(sim));
    sim.t_ps = 123456789000ull; /* not at an edge, not at a wrap */
    sim.tsc_hz = TSC_HZ;
    sim.ref_hz = pit ? 1193182u : 3579545u;
    sim.down = pit;
    sim.mask = pit ? 0xffff : 0xffffff;
    sim.read_ps = 130000; /* 130 ns: a PIT read under TCG */
    ref = (struct tsc_cal_ref){sim_read, sim_tsc, sim.ref_hz, sim.mask, sim.down};
}

/* The rate, its error within the bound it states. */
static void assert_within(const struct tsc_cal_rate *r)
{
    uint64_t d = r->hz > sim.tsc_hz ? r->hz - sim.tsc_hz : sim.tsc_hz - r->hz;
    assert_true(r->hz > 0);
    assert_true((unsigned __int128)d * 1000000u <= (unsigned __int128)sim.tsc_hz * r->ppm);
}

static struct tsc_cal_rate start_work_finish(uint64_t work_ps, uint32_t want, uint64_t max_ticks)
{
    struct tsc_cal c;
    struct tsc_cal_rate r;
    uint64_t coarse = 0;

    assert_int_equal(tsc_cal_start(&c, &ref, &coarse), 0);
    assert_true(coarse > sim.tsc_hz / 100 * 99 && coarse < sim.tsc_hz / 100 * 101);
    sim.t_ps += work_ps;
    assert_int_equal(tsc_cal_finish(&c, want, max_ticks, &r), 0);
    assert_within(&r);
    return r;
}

/* The boot's work already made the window long enough: finish takes a
 * few edges and no more. */
static void test_finish_after_long_work_takes_no_wait(void **state)
{
    (void)state;
    sim_setup(true);
    uint64_t t0 = sim.t_ps;
    struct tsc_cal_rate r = start_work_finish(10000000000ull, 50, 1193182u / 10);
    assert_true(r.ppm <= 50);
    /* start (coarse: 256 ticks) + 10 ms + a few edges at the end */
    assert_true(sim.t_ps - t0 < 10000000000ull + 400000000ull);
}

/* No work in between: finish waits until the error is at most 50 ppm,
 * not longer: with brackets of ~2 reads that is a few ms. */
static void test_finish_waits_for_the_bound(void **state)
{
    (void)state;
    sim_setup(true);
    uint64_t t0 = sim.t_ps;
    struct tsc_cal_rate r = start_work_finish(0, 50, 1193182u / 10);
    assert_true(r.ppm <= 50);
    assert_true(r.ppm > 25);
    assert_true(sim.t_ps - t0 < 10000000000ull);
}

/* The PIT wraps every 55 ms: 3.3 s of work is 60 wraps, counted through
 * the coarse rate. */
static void test_wraps_counted(void **state)
{
    (void)state;
    sim_setup(true);
    struct tsc_cal_rate r = start_work_finish(3300000000000ull, 50, 1193182u / 10);
    assert_true(r.ticks > 60ull * 65536u);
    assert_true(r.ppm <= 1);
}

static void test_pm_timer(void **state)
{
    (void)state;
    sim_setup(false);
    struct tsc_cal_rate r = start_work_finish(3000000000ull, 50, 3579545u / 10);
    assert_true(r.ppm <= 50);
}

/* Stalls of 40 us in reads: the brackets around them are wide, the
 * narrowest edge is kept, and the bound still holds. */
static void test_stalls_stay_within_the_bound(void **state)
{
    (void)state;
    for (unsigned every = 3; every < 12; every++) {
        sim_setup(true);
        sim.stall_every = every;
        sim.stall_ps = 40000000;
        struct tsc_cal_rate r = start_work_finish(2000000000ull * every, 200, 1193182u / 10);
        assert_true(r.ppm <= 200 || r.ticks >= 1193182u / 10);
    }
}

/* A host that stalls every other read: the bound is never reached, the
 * window ends at max_ticks with the error it has, stated. */
static void test_max_window(void **state)
{
    (void)state;
    sim_setup(true);
    sim.stall_every = 1;
    sim.stall_ps = 2000000000; /* 2 ms each read */
    struct tsc_cal_rate r = start_work_finish(0, 1, 1193182u / 100);
    assert_true(r.ticks >= 1193182u / 100);
    assert_true(r.ppm > 1);
}

static void test_dead_counter(void **state)
{
    (void)state;
    struct tsc_cal c;
    uint64_t coarse = 1;
    sim_setup(true);
    sim.dead = true;
    assert_int_equal(tsc_cal_start(&c, &ref, &coarse), -ENODEV);
}

static void test_rate_and_bound(void **state)
{
    (void)state;
    struct tsc_cal_edge e0 = {1000, 100, 0}, e1 = {1000 + 2096006, 200, 0};
    /* 1 ms of PIT ticks, 2096006 cycles: 2.096 GHz; 300 / (2096006 - 300) */
    struct tsc_cal_rate r = tsc_cal_rate(&e0, &e1, 1193182u / 1000, 1193182u);
    assert_int_equal(r.hz, (uint64_t)2096006 * 1193182u / 1193);
    assert_int_equal(r.ppm, 144);
    assert_int_equal(tsc_cal_rate(&e1, &e0, 1193, 1193182u).hz, 0);
    assert_int_equal(tsc_cal_rate(&e0, &e1, 0, 1193182u).hz, 0);
    struct tsc_cal_edge wide = {1000 + 2096006, 3000000, 0};
    assert_int_equal(tsc_cal_rate(&e0, &wide, 1193, 1193182u).ppm, UINT32_MAX);
}

static void test_unwrap(void **state)
{
    (void)state;
    sim_setup(true);
    /* down counter: 100 -> 90 is 10 ticks; at 2.096 GHz 1 s is 18 wraps + */
    assert_int_equal(tsc_cal_unwrap(&ref, 100, 90, 0, TSC_HZ), 10);
    uint64_t ticks = 1193182u;
    uint32_t c1 = (uint32_t)(100 - ticks) & 0xffff;
    assert_int_equal(tsc_cal_unwrap(&ref, 100, c1, TSC_HZ, TSC_HZ), ticks);
    /* a rate 2% off still finds the wrap count */
    assert_int_equal(tsc_cal_unwrap(&ref, 100, c1, TSC_HZ, TSC_HZ / 100 * 102), ticks);
    assert_int_equal(tsc_cal_unwrap(&ref, 100, c1, TSC_HZ, 0), ticks & 0xffff);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finish_after_long_work_takes_no_wait),
        cmocka_unit_test(test_finish_waits_for_the_bound),
        cmocka_unit_test(test_wraps_counted),
        cmocka_unit_test(test_pm_timer),
        cmocka_unit_test(test_stalls_stay_within_the_bound),
        cmocka_unit_test(test_max_window),
        cmocka_unit_test(test_dead_counter),
        cmocka_unit_test(test_rate_and_bound),
        cmocka_unit_test(test_unwrap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
