/* app=hostile's catalogue (apps/hostile_cases.c): every ring case's
 * layout built through virtq_raw.h on a split queue, and every packed
 * case's on a packed queue, that the simulated device reads, whose
 * checker (sim_check.c) must find exactly the violation the case names;
 * the setup cases against the simulated transport; case= parsing. */
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
    uint32_t rang; /* the last doorbell's value */
};

static void ring_keep(const struct virtq_doorbell *db, uint32_t val)
{
    ((struct fix *)db->ctx)->rang = val;
}

/* A queue of num entries (flags: the format and features) with the
 * case's memory. */
static struct fix *fix_alloc(uint16_t num, bool rx, unsigned flags)
{
    struct fix *f = mem_alloc_dma(sizeof(*f), 64);
    assert_int_equal(virtq_create(&f->vq, rx ? 0 : 1, num, flags), 0);
    f->q.max = num;
    simq_attach(&f->q, num, virtq_desc_addr(f->vq), virtq_driver_addr(f->vq),
                virtq_device_addr(f->vq), flags);
    struct virtq_doorbell db = {ring_keep, 0, f, rx ? 0 : 1, false};
    virtq_set_doorbell(f->vq, &db);
    f->e = (struct hostile_env){.vq = f->vq, .features = VIRTIO_BIT(VIRTIO_F_VERSION_1), .txq = 1};
    f->e.buf = mem_alloc_dma(HOSTILE_BUF, 64);
    f->e.tab = mem_alloc_dma(HOSTILE_TAB_ENTS * sizeof(struct virtq_raw_desc), 64);
    memset(f->e.buf + HOSTILE_HDR, 0x5a, HOSTILE_BUF - HOSTILE_HDR);
    f->rxmem = mem_alloc_dma((size_t)num * RX_SLOT, 64);
    uint64_t buf = (uintptr_t)f->e.buf, tab = (uintptr_t)f->e.tab, rxm = (uintptr_t)f->rxmem;
    f->mem[0] = (struct simchk_mem){buf, buf + HOSTILE_BUF};
    f->mem[1] = (struct simchk_mem){tab, tab + HOSTILE_TAB_ENTS * 16u};
    f->mem[2] = (struct simchk_mem){rxm, rxm + (uint64_t)num * RX_SLOT};
    f->env = (struct simchk_env){f->mem, 3, rx, 1500, 0, 0};
    return f;
}

/* A split queue of num entries as the app has it after bring-up, more
 * flags (VIRTQ_F_NOTIF_DATA) as negotiated: on RX, every slot posted
 * device-writable. */
static struct fix *fix_make(uint16_t num, bool rx, unsigned more)
{
    struct fix *f = fix_alloc(num, rx, VIRTQ_F_EVENT_IDX | VIRTQ_F_INDIRECT | more);
    if (rx) {
        for (uint16_t i = 0; i < num; i++) {
            struct virtq_buf b = {(uintptr_t)f->rxmem + (uintptr_t)i * RX_SLOT, RX_SLOT, i};
            assert_int_equal(virtq_add_bufs(f->vq, &b, 1, true), 1);
        }
    }
    f->env.avail_event0 = *(const uint16_t *)&f->q.used->ring[num];
    return f;
}

static struct fix *fix_new(uint16_t num, bool rx)
{
    return fix_make(num, rx, 0);
}

/* A packed transmitq of num entries whose driver and device have gone pre
 * descriptors on, each made available, used and reclaimed: the case
 * starts there (pre >= num: on the second lap, wrap counter 0). */
static struct fix *pfix_new(uint16_t num, uint16_t pre)
{
    struct fix *f = fix_alloc(num, false, VIRTQ_F_PACKED | VIRTQ_F_EVENT_IDX | VIRTQ_F_INDIRECT);
    f->e.features |= VIRTIO_BIT(VIRTIO_F_RING_PACKED);
    for (uint16_t k = 0; k < pre; k++) {
        struct virtq_buf b = {(uintptr_t)f->e.buf, HOSTILE_HDR + HOSTILE_FRAME, k};
        struct virtq_used_buf u;
        assert_int_equal(virtq_add_bufs(f->vq, &b, 1, false), 1);
        assert_int_equal(simq_take(&f->q, 1), 1);
        simq_put_used(&f->q, f->q.held[0].id, 0, 1);
        f->q.nheld = 0;
        assert_int_equal(virtq_get_used(f->vq, &u, 1), 1);
    }
    assert_int_equal(f->q.last_avail, pre);
    f->env.dev_event0 = f->q.device_ev->off_wrap | (uint32_t)f->q.device_ev->flags << 16;
    return f;
}

static const struct hostile_case *named(const char *name)
{
    const struct hostile_case *c = hostile_find(name, (unsigned)strlen(name));
    assert_non_null(c);
    return c;
}

/* The kinds whose layout is a TX or RX ring's (simchk_split). */
static bool ring_kind(const struct hostile_case *c)
{
    return c->kind != HK_SETUP && c->kind != HK_CTRL && c->kind != HK_NOTIF &&
           c->kind != HK_PACKED && c->kind != HK_DISQ;
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
            if (!ring_kind(c))
                continue;
            struct fix *f = fix_new(sizes[s], c->kind == HK_RX);
            assert_int_equal(c->build(&f->e), 0);
            uint64_t want = c->viol == HV_NONE ? 0 : 1ull << c->viol;
            uint64_t got = simchk_split(&f->q, &f->env);
            if (got != want)
                fail_msg("%s (size %u): checker found 0x%llx, the case names 0x%llx", c->name,
                         sizes[s], (unsigned long long)got, (unsigned long long)want);
            ran++;
        }
        sim_free_all();
    }
    assert_true(ran >= 2 * 25);
}

/* Each packed case from the ring's start, across its end (the buffer's
 * head the last descriptor of the lap) and on the second lap, at the
 * app's ring size and a small one: exactly the case's violation; the
 * clean buffer none. */
static void test_packed_cases_break_exactly_their_rule(void **state)
{
    (void)state;
    static const uint16_t sizes[] = {16, 256};
    unsigned ran = 0;
    for (unsigned s = 0; s < 2; s++) {
        const uint16_t pres[] = {0, (uint16_t)(sizes[s] - 1u), (uint16_t)(sizes[s] + 3u)};
        for (unsigned p = 0; p < 3; p++) {
            struct fix *clean = pfix_new(sizes[s], pres[p]);
            assert_int_equal(hostile_pvalid(&clean->e), 0);
            assert_int_equal(simchk_packed(&clean->q, &clean->env), 0);
            assert_int_equal(simq_pending(&clean->q), 1);
            for (unsigned i = 0; i < hostile_ncases; i++) {
                const struct hostile_case *c = &hostile_cases[i];
                if (c->kind != HK_PACKED)
                    continue;
                struct fix *f = pfix_new(sizes[s], pres[p]);
                assert_true(hostile_offered(c, f->e.features));
                assert_int_equal(c->build(&f->e), 0);
                uint64_t want = 1ull << c->viol, got = simchk_packed(&f->q, &f->env);
                if (got != want)
                    fail_msg("%s (size %u, from %u): checker found 0x%llx, the case names 0x%llx",
                             c->name, sizes[s], pres[p], (unsigned long long)got,
                             (unsigned long long)want);
                ran++;
            }
            sim_free_all();
        }
    }
    assert_true(ran >= 2 * 3 * 14);
}

/* bufs: the frames a packed case may put on the wire, for the host's
 * count: none where nothing is available, two for two buffers, and two
 * where a device that ignores a NEXT it must not meet sees two. */
static void test_packed_cases_count_what_may_reach_the_wire(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        uint16_t bufs;
    } want[] = {{"packed_wrap_wrong", 0}, {"packed_flags_used", 0}, {"packed_id_twice", 2},
                {"packed_ind_next", 2},   {"packed_chain_wrap", 1}, {"packed_ind_len0", 1}};
    for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        struct fix *f = pfix_new(16, 5);
        assert_int_equal(named(want[i].name)->build(&f->e), 0);
        if (f->e.bufs != want[i].bufs)
            fail_msg("%s: bufs %u, not %u", want[i].name, f->e.bufs, want[i].bufs);
    }
}

/* The raw writes refuse the other format and a position past the ring:
 * a packed case on a split queue writes nothing, a split one on a packed
 * queue neither. */
static void test_raw_writes_keep_to_their_format(void **state)
{
    (void)state;
    struct fix *split = fix_new(16, false), *packed = pfix_new(16, 0);
    struct virtq_raw_pdesc pd = {0};
    struct virtq_raw_desc d = {0};
    assert_int_equal(virtq_raw_pdesc(packed->vq, 16, &pd), -EINVAL);
    assert_int_equal(virtq_raw_pdesc(packed->vq, 15, &pd), 0);
    assert_int_equal(virtq_raw_pdesc(split->vq, 0, &pd), -EINVAL);
    assert_int_equal(virtq_raw_desc(packed->vq, 0, &d), -EINVAL);
    assert_int_equal(virtq_raw_pevent(split->vq, false, 0, 0), -EINVAL);
    assert_int_equal(virtq_raw_pbits(split->vq, 0, false), 0);
    assert_false(hostile_offered(named("packed_id_twice"), split->e.features));
    assert_int_equal(named("packed_id_twice")->build(&split->e), -EINVAL);
    assert_int_equal(simchk_split(&split->q, &split->env), 0);
    packed = pfix_new(16, 0);
    assert_int_equal(named("chain_loop")->build(&packed->e), -EINVAL);
    assert_int_equal(simchk_packed(&packed->q, &packed->env), 0);
}

/* A command the device may take: len bytes at the control case's place,
 * its ack device-writable. */
static void clean_cmd(struct fix *f, const uint8_t *cmd, uint32_t len)
{
    uint64_t b = (uintptr_t)f->e.buf;
    uint16_t head = 0;
    memcpy(f->e.buf + HOSTILE_CTRL_CMD, cmd, len);
    assert_int_equal(hostile_desc(&f->e, 0, b + HOSTILE_CTRL_CMD, len, VIRTQ_RAW_F_NEXT, 1), 0);
    assert_int_equal(hostile_desc(&f->e, 1, b + HOSTILE_CTRL_ACK, 1, VIRTQ_RAW_F_WRITE, 0), 0);
    assert_int_equal(hostile_publish(&f->e, &head, 1), 0);
}

static struct fix *ctrl_fix(uint16_t num, uint16_t pairs)
{
    struct fix *f = fix_new(num, false);
    f->e.max_pairs = pairs;
    f->e.rss_types = 0x1ff; /* every type, extension headers too */
    return f;
}

/* Valid commands: PROMISC on, VQ_PAIRS_SET to the maximum, an RSS table
 * of 128 entries over every pair; the checker finds nothing. */
static void check_clean_commands(uint16_t num, uint16_t pairs)
{
    const uint8_t promisc[] = {0, 0, 1}, set[] = {4, 0, (uint8_t)pairs, (uint8_t)(pairs >> 8)};
    struct fix *f = ctrl_fix(num, pairs);
    clean_cmd(f, promisc, sizeof(promisc));
    assert_int_equal(simchk_ctrl(&f->q, pairs), 0);
    f = ctrl_fix(num, pairs);
    clean_cmd(f, set, sizeof(set));
    assert_int_equal(simchk_ctrl(&f->q, pairs), 0);
    uint8_t rss[2 + 11 + 2 * 128 + 40] = {4, 1, 0x3f, 0, 0, 0, 127, 0, 0, 0};
    for (unsigned i = 0; i < 128; i++)
        rss[10 + 2 * i] = (uint8_t)(i % pairs);
    rss[10 + 256] = 1;
    rss[12 + 256] = 40;
    f = ctrl_fix(num, pairs);
    clean_cmd(f, rss, sizeof(rss));
    assert_int_equal(simchk_ctrl(&f->q, pairs), 0);
}

/* Each control case on a control queue of the sizes QEMU gives (64) and
 * a small one, against a device of one pair and of four: the checker
 * finds exactly the case's violation; the ack is left for the device. */
static void test_ctrl_cases_break_exactly_their_rule(void **state)
{
    (void)state;
    static const uint16_t sizes[] = {16, 64}, pairs[] = {1, 4};
    unsigned ran = 0;
    for (unsigned s = 0; s < 2; s++) {
        for (unsigned p = 0; p < 2; p++) {
            check_clean_commands(sizes[s], pairs[p]);
            for (unsigned i = 0; i < hostile_ncases; i++) {
                const struct hostile_case *c = &hostile_cases[i];
                if (c->kind != HK_CTRL)
                    continue;
                struct fix *f = ctrl_fix(sizes[s], pairs[p]);
                assert_int_equal(c->build(&f->e), 0);
                assert_int_equal(f->e.buf[HOSTILE_CTRL_ACK], HOSTILE_ACK_NONE);
                assert_int_equal(f->e.bufs, 1);
                uint32_t got = simchk_ctrl(&f->q, pairs[p]);
                if (got != 1u << c->viol)
                    fail_msg("%s (size %u, %u pairs): checker found 0x%x, the case names 0x%x",
                             c->name, sizes[s], pairs[p], got, 1u << c->viol);
                ran++;
            }
            sim_free_all();
        }
    }
    assert_int_equal(ran, 4 * 9);
}

/* The notification cases: a valid buffer (the ring checker finds
 * nothing), then a doorbell whose data lies as the case names; the
 * driver's own kick says the truth. */
static void test_notif_cases_lie_exactly(void **state)
{
    (void)state;
    struct fix *clean = fix_make(256, false, VIRTQ_F_NOTIF_DATA);
    assert_int_equal(hostile_valid(&clean->e), 0);
    virtq_notify(clean->vq);
    assert_int_equal(simchk_notify(&clean->q, clean->rang), 0);
    unsigned ran = 0;
    for (unsigned i = 0; i < hostile_ncases; i++) {
        const struct hostile_case *c = &hostile_cases[i];
        if (c->kind != HK_NOTIF)
            continue;
        struct fix *f = fix_make(256, false, VIRTQ_F_NOTIF_DATA);
        f->rang = 0xdeadu;
        assert_int_equal(c->build(&f->e), 0);
        assert_int_equal(f->rang & 0xffffu, 1u); /* the transmitq's own index */
        assert_int_equal(simchk_split(&f->q, &f->env), 0);
        assert_int_equal(simchk_notify(&f->q, f->rang), 1u << c->viol);
        /* without NOTIFICATION_DATA the doorbell takes no data: refused */
        struct fix *g = fix_new(256, false);
        assert_int_equal(c->build(&g->e), -EINVAL);
        ran++;
    }
    assert_int_equal(ran, 2);
}

/* Every violation the checkers know is some case's. */
static void test_every_violation_has_a_case(void **state)
{
    (void)state;
    uint64_t named = 0;
    uint32_t cnamed = 0;
    for (unsigned i = 0; i < hostile_ncases; i++) {
        const struct hostile_case *c = &hostile_cases[i];
        if (c->kind == HK_CTRL || c->kind == HK_NOTIF || c->kind == HK_DISQ)
            cnamed |= 1u << c->viol;
        else
            named |= 1ull << c->viol;
    }
    assert_int_equal(named | 1u, (1ull << HV_COUNT) - 1u);
    assert_int_equal(cnamed | 1u, (1u << HC_COUNT) - 1u);
}

/* A case runs only with every feature it needs negotiated. */
static void test_cases_need_their_features(void **state)
{
    (void)state;
    const uint64_t ctrl = VIRTIO_BIT(VIRTIO_NET_F_CTRL_VQ) | VIRTIO_BIT(VIRTIO_NET_F_CTRL_RX);
    unsigned needing = 0;
    for (unsigned i = 0; i < hostile_ncases; i++) {
        const struct hostile_case *c = &hostile_cases[i];
        assert_true(hostile_offered(c, c->needs));
        assert_true(hostile_offered(c, ~0ull));
        assert_int_equal(hostile_offered(c, 0), c->needs == 0);
        /* control cases need the control queue; the rest no feature of it */
        assert_int_equal(c->kind == HK_CTRL, (c->needs & VIRTIO_BIT(VIRTIO_NET_F_CTRL_VQ)) != 0);
        /* packed cases need the packed ring; the rest run on a split one */
        assert_int_equal(c->kind == HK_PACKED, (c->needs & VIRTIO_BIT(VIRTIO_F_RING_PACKED)) != 0);
        for (unsigned bit = 0; bit < 64; bit++)
            if (c->needs & VIRTIO_BIT(bit))
                assert_false(hostile_offered(c, ~VIRTIO_BIT(bit)));
        needing += c->needs != 0;
    }
    assert_int_equal(needing, 13 + 14); /* and every packed case needs the packed ring */
    assert_false(hostile_offered(named("ctrl_mq_pairs0"), ctrl));
    assert_true(hostile_offered(named("ctrl_short"), ctrl));
    assert_false(hostile_offered(named("qreset_active"), ctrl));
    assert_true(hostile_offered(named("notif_data_ahead"), VIRTIO_BIT(VIRTIO_F_NOTIFICATION_DATA)));
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

/* The transmitq as bring-up left it on the simulated device. */
static struct fix *qreset_fix(struct sim_dev **sd)
{
    const uint8_t live = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
                         VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK;
    struct fix *f = setup_fix(sd, live);
    struct virtio_dev *v = &(*sd)->vdev;
    assert_int_equal(v->ops->queue_setup(v, 1, 256, virtq_desc_addr(f->vq),
                                         virtq_driver_addr(f->vq), virtq_device_addr(f->vq)),
                     0);
    return f;
}

/* qreset_active: a full ring in flight, the queue reset, re-enabled at
 * its size and addresses, one valid buffer on the new ring; a device
 * that ignores the reset (queue still enabled) fails the case's step. */
static void test_queue_reset_cases(void **state)
{
    (void)state;
    struct sim_dev *sd;
    struct fix *f = qreset_fix(&sd);
    assert_int_equal(sim_avail_pending(sd, 1), 0);
    assert_int_equal(named("qreset_active")->build(&f->e), 0);
    assert_int_equal(sd->qresets, 1);
    assert_int_equal(f->e.bufs, 129);
    assert_int_equal(f->e.used0, 0);
    assert_true(sd->q[1].num == 256 && sd->q[1].desc == (void *)(uintptr_t)virtq_desc_addr(f->vq));
    assert_int_equal(sim_avail_pending(sd, 1), 1);
    assert_int_equal(sim_tx_step(sd, 0), 1); /* the new ring's buffer, a valid frame */
    assert_int_equal(sd->tx_log[0].len, HOSTILE_FRAME);

    f = qreset_fix(&sd);
    sd->qreset_ready = true;
    assert_int_equal(named("qreset_active")->build(&f->e), -EIO);

    f = qreset_fix(&sd);
    assert_int_equal(named("qreset_size_bad")->build(&f->e), -EINVAL); /* sim: above its max */
    assert_int_equal(sd->qresets, 1);
    assert_int_equal(f->e.bufs, 0);
}

/* A device of `queues` queues (QEMU's virtio-net of one pair: receiveq,
 * transmitq and the control queue, which it has whether or not the driver
 * negotiated CTRL_VQ) with both of pair 0 enabled on it, the transmitq
 * the case's, ringing the device's doorbell; the driver's view: pairs in
 * use, the control queue enabled or not, max_virtqueue_pairs. */
static struct fix *disq_fix(struct sim_dev **sd, unsigned queues, bool ctrl, uint16_t max_pairs)
{
    struct fix *f = qreset_fix(sd);
    struct virtio_dev *v = &(*sd)->vdev;
    struct virtq *rx;
    assert_int_equal(virtq_create(&rx, 0, 256, VIRTQ_F_EVENT_IDX), 0);
    assert_int_equal(v->ops->queue_setup(v, 0, 256, virtq_desc_addr(rx), virtq_driver_addr(rx),
                                         virtq_device_addr(rx)),
                     0);
    for (unsigned q = queues; q < SIM_QMAX; q++)
        (*sd)->q[q].max = 0;
    (*sd)->auto_tx = true;
    v->ops->queue_notifier(v, 1, f->vq);
    f->e.pairs = 1;
    f->e.ctrl = ctrl;
    f->e.max_pairs = max_pairs;
    return f;
}

static uint64_t sim_rings(const struct sim_dev *sd)
{
    uint64_t n = 0;
    for (unsigned q = 0; q < SIM_QMAX; q++)
        n += sd->q[q].notifies;
    return n;
}

/* The queue it finds: the first past the pairs in use that the device
 * has, skipping the control queue where the driver enabled it; none on a
 * one-pair device whose control queue is in use. */
static void test_disabled_queue_is_found_not_assumed(void **state)
{
    (void)state;
    static const struct {
        unsigned queues;
        bool ctrl;
        uint16_t max_pairs;
        int want;
    } t[] = {{3, false, 1, 2}, {3, true, 1, -ENOENT}, {4, true, 1, 3},
             {9, true, 4, 2},  {9, false, 4, 2},      {2, false, 1, -ENOENT}};
    for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        struct sim_dev *sd;
        struct fix *f = disq_fix(&sd, t[i].queues, t[i].ctrl, t[i].max_pairs);
        if (hostile_disabled_queue(&f->e) != t[i].want)
            fail_msg("row %u: queue %d, not %d", i, hostile_disabled_queue(&f->e), t[i].want);
        f->e.disq = t[i].want;
        assert_int_equal(named("notify_disabled_queue")->build(&f->e), t[i].want < 0 ? -ENOENT : 0);
        assert_int_equal(sim_rings(sd), t[i].want < 0 ? 0 : 1);
        sim_free_all();
    }
}

/* notify_disabled_queue: one notification, on the control queue the
 * driver left disabled, is the case's only violation (the buffer is
 * valid); the transmitq keeps its own doorbell, and its kick sends the
 * frame. Ringing an enabled queue the same way breaks nothing. */
static void test_notify_disabled_queue_breaks_exactly_its_rule(void **state)
{
    (void)state;
    struct sim_dev *sd;
    struct fix *f = disq_fix(&sd, 3, false, 1);
    const struct hostile_case *c = named("notify_disabled_queue");
    assert_int_equal(c->kind, HK_DISQ);
    f->e.disq = hostile_disabled_queue(&f->e);
    assert_int_equal(c->build(&f->e), 0);
    assert_int_equal(simchk_notify_off(sd), 1u << c->viol);
    assert_true(sd->q[2].notifies == 1 && !sd->q[2].ready && !sd->q[2].notify_bad);
    assert_int_equal(simchk_split(&f->q, &f->env), 0);
    assert_int_equal(f->e.bufs, 1);
    virtq_notify(f->vq);
    assert_int_equal(sd->q[1].notifies, 1);
    assert_int_equal(sd->q[2].notifies, 1);
    assert_true(sd->ntx == 1 && sd->tx_log[0].len == HOSTILE_FRAME);

    f = disq_fix(&sd, 3, false, 1);
    virtq_raw_notify_queue(f->vq, f->e.vdev, 1);
    assert_int_equal(sd->q[1].notifies, 1);
    assert_int_equal(simchk_notify_off(sd), 0);
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
        cmocka_unit_test_teardown(test_ring_cases_break_exactly_their_rule, sim_teardown),
        cmocka_unit_test_teardown(test_packed_cases_break_exactly_their_rule, sim_teardown),
        cmocka_unit_test_teardown(test_packed_cases_count_what_may_reach_the_wire, sim_teardown),
        cmocka_unit_test_teardown(test_raw_writes_keep_to_their_format, sim_teardown),
        cmocka_unit_test_teardown(test_every_violation_has_a_case, sim_teardown),
        cmocka_unit_test_teardown(test_ctrl_cases_break_exactly_their_rule, sim_teardown),
        cmocka_unit_test_teardown(test_notif_cases_lie_exactly, sim_teardown),
        cmocka_unit_test_teardown(test_cases_need_their_features, sim_teardown),
        cmocka_unit_test_teardown(test_setup_cases_do_what_they_say, sim_teardown),
        cmocka_unit_test_teardown(test_queue_reset_cases, sim_teardown),
        cmocka_unit_test_teardown(test_disabled_queue_is_found_not_assumed, sim_teardown),
        cmocka_unit_test_teardown(test_notify_disabled_queue_breaks_exactly_its_rule, sim_teardown),
        cmocka_unit_test_teardown(test_case_lists, sim_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
