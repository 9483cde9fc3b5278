/* Notification modes against the simulated device and its simulated
 * interrupts (sim_virtio.h): notify= parsing; bring-up and the fallback
 * to polling; the arm / re-check / halt order of RX and TX waits never
 * losing a wakeup when the device completes between the driver's last
 * look and its halt, with and without EVENT_IDX; used_event across the
 * 16-bit index wrap; the counters. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/virtio/vnet_priv.h"
#include "kernel/irq.h"
#include "kernel/json.h"
#include "kernel/mem.h"
#include "sim_virtio.h"

#define FEATURES                                                                                   \
    (VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_NET_F_MAC) |                               \
     VIRTIO_BIT(VIRTIO_NET_F_MRG_RXBUF) | VIRTIO_BIT(VIRTIO_F_EVENT_IDX))
#define NO_EV  (FEATURES & ~VIRTIO_BIT(VIRTIO_F_EVENT_IDX))
#define PACKED VIRTIO_BIT(VIRTIO_F_RING_PACKED)

static struct sim_dev *sim;
static struct vnet_dev *dev;

static struct vnet_dev *up_params(uint64_t features, struct vnet_params p)
{
    sim = sim_new(features, p.ring_size, false);
    dev = mem_alloc_dma(sizeof(*dev), 64);
    assert_int_equal(vnet_dev_init(dev, &sim->vdev, &p), 0);
    return dev;
}

static struct vnet_dev *up(uint64_t features, uint16_t ring, uint8_t rx_mode, uint8_t tx_mode)
{
    return up_params(features, (struct vnet_params){.ring_size = ring,
                                                    .rx_refill = 1,
                                                    .txfull = VNET_TXFULL_WAIT,
                                                    .notify_rx = rx_mode,
                                                    .notify_tx = tx_mode});
}

static int setup(void **state)
{
    (void)state;
    sim_irq_reset();
    return 0;
}

static void deliver(void)
{
    static const uint8_t frame[60] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    assert_int_equal(sim_rx_frame(sim, frame, sizeof(frame)), 1);
}

/* Takes every frame there is and gives the buffers back. */
static int drain(void)
{
    struct vnet_rx rx[64];
    int n = vnet_rx_burst(dev, rx, 64);
    for (int i = 0; i < n; i++)
        vnet_rx_release(dev, rx[i].buf);
    return n;
}

static const char *stats_text(void)
{
    static char buf[8192];
    static struct json j;
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j, NULL);
    vnet_stats_json(dev, &j);
    json_obj_end(&j);
    return json_finish(&j);
}

/* One net_idle, as net/net_stack.c does it. Returns whether it halted. */
static bool idle(void)
{
    irq_idle_enter();
    int busy = vnet_idle_arm(dev);
    uint64_t cycles = 0;
    if (busy)
        irq_idle_leave();
    else
        cycles = irq_idle(0);
    vnet_idle_done(dev, cycles);
    return cycles != 0;
}

static void test_notify_parse(void **state)
{
    (void)state;
    uint8_t rx, tx;
    assert_int_equal(vnet_notify_parse("hybrid", &rx, &tx), 0);
    assert_true(rx == VNET_NOTIFY_HYBRID && tx == VNET_NOTIFY_HYBRID);
    assert_int_equal(vnet_notify_parse("poll", &rx, &tx), 0);
    assert_true(rx == VNET_NOTIFY_POLL && tx == VNET_NOTIFY_POLL);
    assert_int_equal(vnet_notify_parse("rx:irq,tx:hybrid", &rx, &tx), 0);
    assert_true(rx == VNET_NOTIFY_IRQ && tx == VNET_NOTIFY_HYBRID);
    assert_int_equal(vnet_notify_parse("tx:irq", &rx, &tx), 0);
    assert_true(rx == VNET_NOTIFY_POLL && tx == VNET_NOTIFY_IRQ);
    static const char *const bad[] = {"",        "irqs",           "rx:",       "rx:irq,",
                                      ",rx:irq", "rx:irq,rx:poll", "q:irq",     "rx:irq,,tx:irq",
                                      "rx=irq",  "Hybrid",         "tx:hybridx"};
    char why[128];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(vnet_notify_parse(bad[i], &rx, &tx), -EINVAL);
        assert_int_equal(vnet_notify_check(bad[i], why, sizeof(why)), -EINVAL);
        assert_non_null(strstr(why, "poll|irq|hybrid"));
    }
    assert_string_equal(vnet_notify_name(VNET_NOTIFY_HYBRID), "hybrid");
}

static void test_bringup_modes(void **state)
{
    (void)state;
    up(NO_EV, 64, VNET_NOTIFY_HYBRID, VNET_NOTIFY_IRQ);
    assert_true(sim->irq_ready);
    assert_int_equal(dev->rxq[0].note.vector, SIM_VEC0);
    assert_int_equal(dev->txq[0].note.vector, SIM_VEC0 + 1);
    /* hybrid starts polling (notifications off), irq has them on, as
     * the device sees it */
    assert_int_equal(sim->q[0].avail->flags, VRING_AVAIL_F_NO_INTERRUPT);
    assert_int_equal(sim->q[1].avail->flags, 0);
    assert_false(virtq_cb_enabled(dev->rxq[0].vq));
    assert_true(virtq_cb_enabled(dev->txq[0].vq));
    assert_true(vnet_can_idle(dev));
}

static void test_fallback_to_poll(void **state)
{
    (void)state;
    sim = sim_new(FEATURES, 64, false);
    sim->no_irq = true;
    struct vnet_params p = {.ring_size = 64, .rx_refill = 1, .notify_rx = VNET_NOTIFY_IRQ};
    dev = mem_alloc_dma(sizeof(*dev), 64);
    assert_int_equal(vnet_dev_init(dev, &sim->vdev, &p), 0);
    assert_int_equal(dev->rxq[0].note.mode, VNET_NOTIFY_POLL);
    assert_false(vnet_can_idle(dev));
    assert_int_equal(vnet_idle_arm(dev), -EAGAIN);
    /* The result says what ran and what was asked. */
    assert_non_null(strstr(stats_text(), "\"notify\":\"poll\",\"notify_asked\":\"irq\""));
}

/* The device completes between the driver's last look and its halt. */
static void race_rx(void)
{
    deliver();
}

static void rx_race_case(uint64_t features, uint8_t mode)
{
    sim_irq_reset();
    up(features, 64, mode, VNET_NOTIFY_POLL);
    for (int round = 0; round < 300; round++) {
        sim_idle_race = race_rx;
        assert_true(idle());
        assert_int_equal(sim_lost_wakeups, 0);
        sim_idle_race = NULL;
        assert_int_equal(drain(), 1);
    }
    assert_int_equal(dev->rxq[0].note.halts, 300);
    assert_int_equal(irq_count(SIM_VEC0), 300);
    assert_int_equal(dev->rxq[0].note.spurious, 0);
    /* hybrid polls again after each halt */
    if (mode == VNET_NOTIFY_HYBRID)
        assert_false(virtq_cb_enabled(dev->rxq[0].vq));
    sim_free_all();
}

/* A reset and a new negotiation (vnet_dev_renegotiate) start the queue's
 * interrupts anew with its halts: the vector's own count runs since boot,
 * and app=reneg's per-set counters (vnperf conform's suppression check,
 * interrupts against halts) must not carry the sets before. */
static void test_renegotiation_starts_the_interrupts_anew(void **state)
{
    (void)state;
    struct vnet_params p = {.ring_size = 64,
                            .rx_refill = 1,
                            .txfull = VNET_TXFULL_WAIT,
                            .notify_rx = VNET_NOTIFY_HYBRID,
                            .notify_tx = VNET_NOTIFY_POLL};
    up_params(FEATURES, p);
    for (int round = 0; round < 5; round++) {
        sim_idle_race = race_rx;
        assert_true(idle());
        sim_idle_race = NULL;
        assert_int_equal(drain(), 1);
    }
    assert_int_equal(irq_count(SIM_VEC0), 5);
    assert_int_equal(vnet_note_irqs(&dev->rxq[0].note), 5);
    assert_non_null(strstr(stats_text(), "\"interrupts\":5,"));
    assert_int_equal(vnet_dev_renegotiate(dev, &p), 0);
    assert_int_equal(dev->rxq[0].note.vector, SIM_VEC0);
    assert_int_equal(irq_count(SIM_VEC0), 5);
    assert_int_equal(vnet_note_irqs(&dev->rxq[0].note), 0);
    assert_int_equal(dev->rxq[0].note.halts, 0);
    assert_non_null(strstr(stats_text(), "\"interrupts\":0,"));
    sim_idle_race = race_rx;
    assert_true(idle());
    sim_idle_race = NULL;
    assert_int_equal(vnet_note_irqs(&dev->rxq[0].note), 1);
    assert_int_equal(dev->rxq[0].note.halts, 1);
    sim_free_all();
}

static void test_rx_halt_never_loses_a_wakeup(void **state)
{
    (void)state;
    rx_race_case(FEATURES, VNET_NOTIFY_HYBRID);
    rx_race_case(NO_EV, VNET_NOTIFY_HYBRID);
    rx_race_case(FEATURES, VNET_NOTIFY_IRQ);
    rx_race_case(NO_EV, VNET_NOTIFY_IRQ);
    rx_race_case(FEATURES | PACKED, VNET_NOTIFY_HYBRID);
    rx_race_case(NO_EV | PACKED, VNET_NOTIFY_HYBRID);
    rx_race_case(FEATURES | PACKED, VNET_NOTIFY_IRQ);
}

/* The check is real: halting with notifications still off (what a
 * driver that skipped the arm would do) is caught as a lost wakeup. */
static void test_sim_catches_a_lost_wakeup(void **state)
{
    (void)state;
    for (int ev = 0; ev < 4; ev++) {
        sim_irq_reset();
        up(((ev & 1) ? FEATURES : NO_EV) | ((ev & 2) ? PACKED : 0), 64, VNET_NOTIFY_HYBRID,
           VNET_NOTIFY_POLL);
        sim_idle_race = race_rx;
        irq_idle_enter();
        irq_idle(0);
        assert_int_equal(sim_lost_wakeups, 1);
        sim_free_all();
    }
}

/* Work that is already there is found by the re-check: no halt. */
static void test_rx_work_before_halt(void **state)
{
    (void)state;
    for (int ev = 0; ev < 2; ev++) {
        sim_irq_reset();
        up(ev ? FEATURES : NO_EV, 64, VNET_NOTIFY_HYBRID, VNET_NOTIFY_POLL);
        deliver();
        assert_false(idle());
        assert_int_equal(dev->rxq[0].note.halts, 0);
        assert_int_equal(drain(), 1);
        sim_free_all();
    }
}

/* A wake by the queue's interrupt that finds nothing is spurious. */
static void race_spurious(void)
{
    deliver();
    assert_int_equal(drain(), 1); /* as if another path took it first */
}

static void test_rx_spurious_wakeup(void **state)
{
    (void)state;
    up(FEATURES, 64, VNET_NOTIFY_HYBRID, VNET_NOTIFY_POLL);
    sim_idle_race = race_spurious;
    assert_true(idle());
    assert_int_equal(dev->rxq[0].note.spurious, 1);
    assert_int_equal(sim_lost_wakeups, 0);
}

/* txfull=wait halts until the TX interrupt; the device completes only
 * while the driver halts (sim_relax from irq_idle). */
static void tx_wait_case(uint64_t features, uint8_t mode)
{
    sim_irq_reset();
    up(features, 16, VNET_NOTIFY_POLL, mode);
    sim->relax_tx = true;
    static uint8_t bufs[100][VNET_HDR_ROOM + 64];
    struct vnet_tx tx[100];
    for (int i = 0; i < 100; i++)
        tx[i] = (struct vnet_tx){
            .frame = bufs[i] + VNET_HDR_ROOM, .len = 60, .cookie = (void *)(uintptr_t)(i + 1)};
    assert_int_equal(vnet_tx_burst(dev, tx, 100), 100);
    assert_int_equal(sim_lost_wakeups, 0);
    assert_true(dev->txq[0].note.halts >= 1);
    assert_int_equal(dev->txq[0].st.wait_timeouts, 0);
    /* Each halt ends on an interrupt; with EVENT_IDX the rest of the
     * device's batch is folded into it, without it each used buffer
     * the flag allows sends one. */
    if (features & VIRTIO_BIT(VIRTIO_F_EVENT_IDX))
        assert_int_equal(irq_count(SIM_VEC0 + 1), dev->txq[0].note.halts);
    else
        assert_true(irq_count(SIM_VEC0 + 1) > dev->txq[0].note.halts);
    assert_int_equal(virtq_cb_enabled(dev->txq[0].vq), mode == VNET_NOTIFY_IRQ);
    sim_tx_step(sim, 0);
    assert_int_equal(sim->tx_seen, 100);
    sim_free_all();
}

static void test_tx_wait_halts(void **state)
{
    (void)state;
    tx_wait_case(FEATURES, VNET_NOTIFY_HYBRID);
    tx_wait_case(NO_EV, VNET_NOTIFY_HYBRID);
    tx_wait_case(FEATURES, VNET_NOTIFY_IRQ);
    tx_wait_case(NO_EV, VNET_NOTIFY_IRQ);
    tx_wait_case(FEATURES | PACKED, VNET_NOTIFY_HYBRID);
    tx_wait_case(NO_EV | PACKED, VNET_NOTIFY_IRQ);
}

/* notify=irq with EVENT_IDX across the 16-bit index wrap: one interrupt
 * per used buffer when each is taken before the next comes; one per
 * batch when they come four at a time, the other three folded by
 * used_event. */
static void test_used_event_across_wrap(void **state)
{
    (void)state;
    up(FEATURES, 256, VNET_NOTIFY_IRQ, VNET_NOTIFY_POLL);
    const unsigned single = 70000, batches = 20000;
    for (unsigned i = 0; i < single; i++) {
        deliver();
        assert_int_equal(drain(), 1);
        assert_int_equal(irq_count(SIM_VEC0), i + 1);
    }
    for (unsigned i = 0; i < batches; i++) {
        for (int k = 0; k < 4; k++)
            deliver();
        assert_int_equal(drain(), 4);
    }
    assert_int_equal(irq_count(SIM_VEC0), single + batches);
    const char *out = stats_text();
    char want[64];
    snprintf(want, sizeof(want), "\"used_event_suppressed\":%u", 3 * batches);
    assert_non_null(strstr(out, want));
    assert_non_null(strstr(out, "\"notify\":\"irq\""));
}

/* rx_coalesce=N: armed for a halt, the device notifies at the Nth frame,
 * not the first (EVENT_IDX: used_event, or the packed off_wrap, N-1 on),
 * but at the latest once half the buffers out are used; the halt gets a
 * time limit for the fewer frames that came. Without EVENT_IDX nothing
 * can say "later": the first frame interrupts, and no limit is needed. */
static void coalesce_case(uint64_t features, uint16_t n, unsigned want_irq_at)
{
    sim_irq_reset();
    up_params(features, (struct vnet_params){.ring_size = 64,
                                             .rx_refill = 1,
                                             .rx_coalesce = n,
                                             .rx_coalesce_us = 700,
                                             .notify_rx = VNET_NOTIFY_HYBRID});
    bool ev = features & VIRTIO_BIT(VIRTIO_F_EVENT_IDX);
    assert_int_equal(vnet_idle_max_ns(dev), ev && n > 1 ? 700000 : 0);
    for (int round = 0; round < 3; round++) {
        irq_idle_enter();
        assert_int_equal(vnet_idle_arm(dev), 0);
        for (unsigned i = 1; i < want_irq_at; i++)
            deliver();
        assert_int_equal(irq_count(SIM_VEC0), round);
        deliver();
        assert_int_equal(irq_count(SIM_VEC0), round + 1);
        irq_idle_leave();
        vnet_idle_done(dev, 0);
        assert_false(virtq_cb_enabled(dev->rxq[0].vq));
        assert_int_equal(drain() + drain(), (int)want_irq_at);
    }
    sim_free_all();
}

static void test_rx_coalesce(void **state)
{
    (void)state;
    coalesce_case(FEATURES, 8, 8);
    coalesce_case(FEATURES | PACKED, 8, 8);
    coalesce_case(FEATURES, 1, 1);
    /* 64 buffers out: at most 32 on, the 33rd frame interrupts */
    coalesce_case(FEATURES, 64, 33);
    coalesce_case(FEATURES | PACKED, 64, 33);
    coalesce_case(NO_EV, 8, 1);
    /* A polled queue never halts: no limit either. */
    up_params(FEATURES,
              (struct vnet_params){
                  .ring_size = 64, .rx_refill = 1, .rx_coalesce = 8, .rx_coalesce_us = 700});
    assert_int_equal(vnet_idle_max_ns(dev), 0);
    assert_non_null(strstr(stats_text(), "\"rx_coalesce\":8,\"rx_coalesce_us\":700"));
}

/* A device of two queue pairs (MQ over the control queue), TX hybrid,
 * RX in mode rx: what the per-CPU routing tests start from. */
static void up_two_pairs(enum vnet_notify rx)
{
    sim = sim_new(FEATURES | VIRTIO_BIT(VIRTIO_NET_F_CTRL_VQ) | VIRTIO_BIT(VIRTIO_NET_F_MQ), 64,
                  false);
    sim_set_mq(sim, 2, 40, 128, 0x3f);
    dev = mem_alloc_dma(sizeof(*dev), 64);
    struct vnet_params p = {.ring_size = 64,
                            .rx_refill = 1,
                            .txfull = VNET_TXFULL_WAIT,
                            .notify_rx = rx,
                            .notify_tx = VNET_NOTIFY_HYBRID,
                            .queues = 2};
    assert_int_equal(vnet_dev_init(dev, &sim->vdev, &p), 0);
}

/* Two pairs, RX of pair 1 on CPU 1 (APIC ID 5): its queue's vector goes
 * there and only its own halt arms it; CPU 0's arms pair 0 alone. */
static void test_queue_cpu_routes_and_arms_own_pairs(void **state)
{
    (void)state;
    up_two_pairs(VNET_NOTIFY_HYBRID);
    assert_int_equal(vnet_queue_cpu(dev, 1, false, 1, 5), 0);
    assert_int_equal(vnet_queue_cpu(dev, 1, true, 1, 5), 0);
    assert_int_equal(vnet_queue_cpu(dev, 2, false, 1, 5), -EINVAL);
    assert_int_equal(sim->q[2].irq_dest, 5); /* receiveq(1) */
    assert_int_equal(sim->q[3].irq_dest, 5); /* transmitq(1) */
    assert_int_equal(sim->q[0].irq_dest, 0);
    assert_int_equal(sim->q[1].irq_dest, 0);

    irq_idle_enter();
    assert_int_equal(vnet_idle_arm_cpu(dev, 1), 0);
    assert_true(virtq_cb_enabled(dev->rxq[1].vq));
    assert_false(virtq_cb_enabled(dev->rxq[0].vq));
    irq_idle_leave();
    vnet_idle_done_cpu(dev, 1, 0);
    assert_false(virtq_cb_enabled(dev->rxq[1].vq)); /* hybrid: off again */

    irq_idle_enter();
    assert_int_equal(vnet_idle_arm(dev), 0);
    assert_true(virtq_cb_enabled(dev->rxq[0].vq));
    assert_false(virtq_cb_enabled(dev->rxq[1].vq));
    irq_idle_leave();
    vnet_idle_done(dev, 0);
    assert_int_equal(vnet_idle_arm_cpu(dev, 2), -EAGAIN); /* owns nothing: nothing wakes it */
    assert_non_null(strstr(stats_text(), "\"cpu\":1,\"rx_notify\":\"hybrid\""));
}

/* Two pairs, pair 1's CPU with an x2APIC ID an MSI cannot name (300;
 * the destination field is 8 bits, Intel SDM vol 3 11.11.1): both of its
 * queues fall back to polling (VNET_QUEUE_POLLED), notifications off,
 * their entries left as they were; its CPU's halt is refused (nothing
 * would wake it), pair 0 still halts, and the result says poll for pair
 * 1 alone. 255, the last ID the field holds, is still routed. */
static void test_queue_cpu_polls_an_apic_id_above_255(void **state)
{
    (void)state;
    up_two_pairs(VNET_NOTIFY_IRQ);
    assert_int_equal(vnet_queue_cpu(dev, 0, false, 0, 255), 0);
    assert_int_equal(sim->q[0].irq_dest, 255);
    assert_int_equal(vnet_queue_cpu(dev, 0, false, 0, 0), 0);
    assert_true(virtq_cb_enabled(dev->rxq[1].vq)); /* notify=irq: on from the start */
    assert_int_equal(vnet_queue_cpu(dev, 1, false, 1, 300), VNET_QUEUE_POLLED);
    assert_int_equal(vnet_queue_cpu(dev, 1, true, 1, 300), VNET_QUEUE_POLLED);
    assert_int_equal(sim->q[2].irq_dest, 0);
    assert_int_equal(sim->q[3].irq_dest, 0);
    assert_false(virtq_cb_enabled(dev->rxq[1].vq));
    assert_int_equal(vnet_rx_notify_mode(dev, 1), VNET_NOTIFY_POLL);
    assert_int_equal(vnet_tx_notify_mode(dev, 1), VNET_NOTIFY_POLL);
    assert_int_equal(vnet_rx_notify_mode(dev, 0), VNET_NOTIFY_IRQ);

    irq_idle_enter();
    assert_int_equal(vnet_idle_arm_cpu(dev, 1), -EAGAIN);
    irq_idle_leave();
    vnet_idle_done_cpu(dev, 1, 0);
    assert_true(idle()); /* CPU 0's pair still halts */
    const char *t = stats_text();
    assert_non_null(strstr(t, "\"cpu\":0,\"rx_notify\":\"irq\",\"tx_notify\":\"hybrid\""));
    assert_non_null(strstr(t, "\"cpu\":1,\"rx_notify\":\"poll\",\"tx_notify\":\"poll\""));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, sim_teardown)
    const struct CMUnitTest tests[] = {
        T(test_notify_parse),
        T(test_bringup_modes),
        T(test_fallback_to_poll),
        T(test_rx_halt_never_loses_a_wakeup),
        T(test_renegotiation_starts_the_interrupts_anew),
        T(test_sim_catches_a_lost_wakeup),
        T(test_rx_work_before_halt),
        T(test_rx_spurious_wakeup),
        T(test_tx_wait_halts),
        T(test_used_event_across_wrap),
        T(test_rx_coalesce),
        T(test_queue_cpu_routes_and_arms_own_pairs),
        T(test_queue_cpu_polls_an_apic_id_above_255),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
