/* app=fwd: L2 io-forwarder between two virtio-net devices, both
 * directions, batched, zero-copy: a frame received on one device is queued
 * on the other as is, and its buffer goes back to the first device's RX
 * ring in the tx_done callback. Frames addressed to us on the first device
 * (ARP for our IP, IPv4 to our IP) go to lwIP so the forwarder answers
 * ping. Runs for duration= (default FWD_DEFAULT_S) or count= frames, or
 * until idle_ms= passed without a frame in on the first device once
 * frames came (the end of a PVP tester's traffic).
 *
 * One instance per vCPU (apps/qstats.h's plan over both devices' pairs):
 * pair p of a and pair p of b belong to one CPU, which forwards a's pair p
 * to b's pair p and back (relay_burst_q), so a buffer sent on goes back to
 * a ring only that CPU touches. Each pair has its own counts, written by
 * its CPU only and added up by CPU 0 at the end. CPU 0 also runs lwIP,
 * the samples and count=; frames for us on an AP's pair are counted
 * (not_ours) and dropped.
 *
 * Where frames waited, per direction: RX bursts that came back full (more
 * were queued in the input ring: the forwarder came round late), bursts
 * the output ring could not take whole (the backend had not emptied it:
 * the rest were dropped), and the most frames left in flight on the output
 * ring after a burst. And how long CPU 0 did not come round at all
 * (apps/stall.h): the host's share of the input ring's overflows. */
#include <stdio.h>
#include <string.h>

#include "apps/app_config.h"
#include "apps/app_list.h"
#include "apps/apps_common.h"
#include "apps/apps_net.h"
#include "apps/percpu.h"
#include "apps/qstats.h"
#include "apps/relay.h"
#include "apps/stall.h"
#include "kernel/exit.h"
#include "kernel/io.h"
#include "kernel/json.h"
#include "kernel/result.h"
#include "kernel/time.h"
#include "net/net.h"
#include "net/pkt.h"

#define FWD_DEFAULT_S 10

/* One direction of one pair (or, added up, of the forwarder). */
struct fwd_dir {
    uint64_t packets, bytes, dropped, runts, local, not_ours;
    uint64_t rx_bursts, rx_full, tx_full, tx_in_flight_max;
    bool ours;   /* lwIP lives on the input device: frames for me are its */
    bool lwip;   /* this CPU runs lwIP (CPU 0) */
    uint32_t me; /* our address (host byte order) */
};

/* Pair p of both devices: a to b, b to a, and when a frame last came in
 * on a (its CPU's cycles). */
struct fwd_pair {
    unsigned queue, cpu;
    struct fwd_dir dir[2];
    uint64_t last_in;
} __attribute__((aligned(64)));

static struct fwd {
    struct net_if *nif[2];
    struct qstats_plan plan;
    struct fwd_pair pair[VNET_MAX_PAIRS];
    struct percpu_job job; /* the APs' loop: end, count=, stop, halts */
} fwd_state;

static enum relay_verdict fwd_judge(void *ctx, const struct vnet_rx *rx)
{
    struct fwd_dir *d = ctx;
    if (rx->len < ETH_HLEN) {
        d->runts++;
        return RELAY_DROP;
    }
    if (d->ours && pkt_for_local(rx->frame, rx->len, d->me)) {
        if (d->lwip) {
            d->local++;
            return RELAY_LWIP;
        }
        d->not_ours++;
        return RELAY_DROP;
    }
    return RELAY_SEND;
}

/* One burst from in's pair p to out's pair p; whether frames came in. */
static bool fwd_step(struct net_if *in, struct net_if *out, unsigned p, struct fwd_dir *d)
{
    struct relay_burst b;
    relay_burst_q(in, out, p, fwd_judge, d, &b);
    if (b.received > 0) {
        d->rx_bursts++;
        d->rx_full += b.received == NET_RX_BATCH;
    }
    if (b.queued) {
        VN_WRITE_ONCE(d->bytes, d->bytes + b.bytes);
        VN_WRITE_ONCE(d->packets, d->packets + (uint64_t)b.sent);
        d->dropped += (uint64_t)(b.queued - b.sent);
        d->tx_full += b.sent < b.queued;
        int fl = vnet_tx_in_flight_q(net_if_dev(out), p);
        if (fl > 0 && (uint64_t)fl > d->tx_in_flight_max)
            d->tx_in_flight_max = (uint64_t)fl;
    }
    net_check(out, vnet_tx_reclaim_q(net_if_dev(out), p));
    return b.received > 0;
}

/* One round of CPU k: both directions of each of its pairs; whether
 * frames came in. */
static int fwd_round(unsigned k, uint64_t now)
{
    struct net_if *a = fwd_state.nif[0], *b = fwd_state.nif[1];
    int in = 0;
    for (unsigned p = 0; p < fwd_state.plan.npairs; p++) {
        if (fwd_state.plan.cpu_of[p] != k)
            continue;
        struct fwd_pair *fp = &fwd_state.pair[p];
        if (fwd_step(a, b, p, &fp->dir[0])) {
            VN_WRITE_ONCE(fp->last_in, now);
            in = 1;
        }
        in |= fwd_step(b, a, p, &fp->dir[1]);
    }
    return in;
}

/* An AP's run: its pairs until CPU 0 says stop or the deadline, halting
 * on both devices' RX interrupts of its pairs when they are empty
 * (notify=irq|hybrid), then its output rings drained. */
static int fwd_ap(unsigned cpu, void *arg)
{
    (void)arg;
    percpu_loop(&fwd_state.job, cpu);
    uint64_t drain_end = time_cycles() + time_ns_to_cycles(100000000ull);
    while (time_cycles() < drain_end)
        for (unsigned p = 0; p < fwd_state.plan.npairs; p++)
            if (fwd_state.plan.cpu_of[p] == cpu)
                for (int i = 0; i < 2; i++)
                    net_check(fwd_state.nif[i], vnet_tx_reclaim_q(net_if_dev(fwd_state.nif[i]), p));
    return 0;
}

/* Frames forwarded so far each way (each an aligned load), and when a
 * frame last came in on a. */
static uint64_t fwd_now(uint64_t dirs[2], uint64_t *last_in)
{
    dirs[0] = dirs[1] = 0;
    *last_in = 0;
    for (unsigned p = 0; p < fwd_state.plan.npairs; p++) {
        const struct fwd_pair *fp = &fwd_state.pair[p];
        dirs[0] += VN_READ_ONCE(fp->dir[0].packets);
        dirs[1] += VN_READ_ONCE(fp->dir[1].packets);
        uint64_t l = VN_READ_ONCE(fp->last_in);
        *last_in = l > *last_in ? l : *last_in;
    }
    return dirs[0] + dirs[1];
}

/* Frames forwarded so far both ways (count=). */
static uint64_t fwd_done(void)
{
    uint64_t dirs[2], last_in;
    return fwd_now(dirs, &last_in);
}

/* d's counts added into t: sums, and the most in flight. */
static void fwd_dir_add(struct fwd_dir *t, const struct fwd_dir *d)
{
    t->packets += d->packets;
    t->bytes += d->bytes;
    t->dropped += d->dropped;
    t->runts += d->runts;
    t->local += d->local;
    t->not_ours += d->not_ours;
    t->rx_bursts += d->rx_bursts;
    t->rx_full += d->rx_full;
    t->tx_full += d->tx_full;
    if (d->tx_in_flight_max > t->tx_in_flight_max)
        t->tx_in_flight_max = d->tx_in_flight_max;
}

static void dir_json(struct json *j, const char *key, const struct fwd_dir *d)
{
    json_obj_begin(j, key);
    json_u64(j, "packets", d->packets);
    json_u64(j, "bytes", d->bytes);
    json_u64(j, "tx_dropped", d->dropped);
    json_u64(j, "runts", d->runts);
    json_u64(j, "to_lwip", d->local);
    json_u64(j, "not_ours", d->not_ours);
    json_u64(j, "rx_bursts", d->rx_bursts);
    json_u64(j, "rx_full", d->rx_full);
    json_u64(j, "tx_full", d->tx_full);
    json_u64(j, "tx_in_flight_max", d->tx_in_flight_max);
    json_obj_end(j);
}

/* The result's "queues": per pair its frames both ways, the frames its
 * output rings did not take, and each output pair's ring-full count and
 * halts (b's for a_to_b, a's for b_to_a). */
static void fwd_queues_json(struct json *j)
{
    json_arr_begin(j, "queues");
    for (unsigned p = 0; p < fwd_state.plan.npairs; p++) {
        const struct fwd_pair *fp = &fwd_state.pair[p];
        uint64_t full[2], halts[2];
        for (int i = 0; i < 2; i++)
            vnet_tx_full_counts(net_if_dev(fwd_state.nif[1 - i]), p, &full[i], &halts[i]);
        json_obj_begin(j, NULL);
        json_u64(j, "queue", fp->queue);
        json_u64(j, "cpu", fp->cpu);
        json_u64(j, "packets", fp->dir[0].packets + fp->dir[1].packets);
        json_u64(j, "bytes", fp->dir[0].bytes + fp->dir[1].bytes);
        json_u64(j, "tx_dropped", fp->dir[0].dropped + fp->dir[1].dropped);
        json_u64(j, "ring_full", full[0] + full[1]);
        json_u64(j, "halts", halts[0] + halts[1]);
        dir_json(j, "a_to_b", &fp->dir[0]);
        dir_json(j, "b_to_a", &fp->dir[1]);
        json_obj_end(j);
    }
    json_arr_end(j);
}

static void fwd_result(const struct app_config *c, uint64_t ns, struct stall *st)
{
    struct fwd_dir t[2] = {0};
    for (unsigned p = 0; p < fwd_state.plan.npairs; p++)
        for (int i = 0; i < 2; i++)
            fwd_dir_add(&t[i], &fwd_state.pair[p].dir[i]);
    uint64_t packets = t[0].packets + t[1].packets, bytes = t[0].bytes + t[1].bytes;
    app_summary("fwd", packets, bytes, ns);
    struct json *j = app_result_begin(c, packets, bytes, ns);
    json_u64(j, "tx_dropped", t[0].dropped + t[1].dropped);
    dir_json(j, "a_to_b", &t[0]);
    dir_json(j, "b_to_a", &t[1]);
    fwd_queues_json(j);
    stall_json(j, st, time_tsc_hz);
    app_result_end(j);
}

/* Both devices' pairs over the CPUs: the same pairs on each, so pair p
 * of a and of b is one CPU's. */
static void fwd_setup(uint64_t count)
{
    struct net_if *a = net_if_get(0), *b = net_if_get(1);
    unsigned pa = vnet_pairs(net_if_dev(a)), pb = vnet_pairs(net_if_dev(b));
    if (pa != pb)
        vn_fatal(VN_EXIT_CONFIG, "fwd: %s has %u queue pairs, %s %u: the same on both",
                 vnet_name(net_if_dev(a)), pa, vnet_name(net_if_dev(b)), pb);
    fwd_state.nif[0] = a;
    fwd_state.nif[1] = b;
    percpu_plan("fwd", net_if_dev(a), &fwd_state.plan);
    percpu_plan("fwd", net_if_dev(b), &fwd_state.plan);
    fwd_state.job = (struct percpu_job){.plan = &fwd_state.plan,
                                        .dev = {net_if_dev(a), net_if_dev(b)},
                                        .ndev = 2,
                                        .round = fwd_round,
                                        .done = fwd_done,
                                        .count = count,
                                        .tx_holds_rx = true};
    percpu_job_ready(&fwd_state.job);
    for (unsigned p = 0; p < fwd_state.plan.npairs; p++) {
        struct fwd_pair *fp = &fwd_state.pair[p];
        fp->queue = p;
        fp->cpu = fwd_state.plan.cpu_of[p];
        for (int i = 0; i < 2; i++) {
            fp->dir[i].ours = net_if_has_lwip(fwd_state.nif[i]);
            fp->dir[i].lwip = fp->cpu == 0;
            fp->dir[i].me = net_ip();
        }
    }
}

/* CPU 0's halt ends at the next sample, the end, or when idle_ms= would
 * pass since the last frame in. */
static uint64_t fwd_wake(const struct meter *m, uint64_t end, uint64_t last_in, uint64_t idle)
{
    uint64_t wake = m->next < end ? m->next : end;
    if (idle && last_in && last_in + idle < wake)
        wake = last_in + idle;
    return wake;
}

int app_fwd_main(const struct app_config *c)
{
    apps_net_init(c, 2, 0);
    fwd_setup(c->count);
    struct meter m;
    meter_start(&m, c);
    uint64_t start = m.t0, now = start, last_in = 0, dirs[2] = {0};
    uint64_t end = app_deadline(c, start, FWD_DEFAULT_S);
    uint64_t count = c->count ? c->count : UINT64_MAX, done = 0;
    uint64_t service_every = time_ns_to_cycles(500000u), next_service = start;
    uint64_t idle = time_ns_to_cycles(c->idle_ms * 1000000ull);
    printf("fwd: %s <-> %s, %u CPU%s on %u pair%s\n", vnet_name(net_if_dev(fwd_state.nif[0])),
           vnet_name(net_if_dev(fwd_state.nif[1])), fwd_state.plan.ncpu,
           fwd_state.plan.ncpu > 1 ? "s" : "", fwd_state.plan.npairs,
           fwd_state.plan.npairs > 1 ? "s" : "");
    fwd_state.job.end = end;
    percpu_start("fwd", &fwd_state.plan, fwd_ap, NULL);

    /* Stalls from here: the console line above was the app's own time. */
    struct stall st;
    app_stall_start(&st);
    while (done < count) {
        now = time_cycles();
        stall_round(&st, now);
        if (now >= end || (idle && last_in && now > last_in && now - last_in >= idle))
            break;
        int in = fwd_round(0, now);
        done = fwd_now(dirs, &last_in);
        if (now >= next_service) {
            net_service();
            next_service = now + service_every;
        }
        /* Empty rings: halt (notify=irq|hybrid) until a frame on CPU 0's
         * pairs, an AP's wake at count=, idle_ms=, the next sample or the
         * end. */
        if (!in && percpu_may_halt(&fwd_state.job, 0))
            stall_skip(&st, net_idle(fwd_wake(&m, end, last_in, idle)));
        if (meter_due(&m, now)) {
            uint64_t bytes = 0;
            for (unsigned p = 0; p < fwd_state.plan.npairs; p++)
                for (int i = 0; i < 2; i++)
                    bytes += VN_READ_ONCE(fwd_state.pair[p].dir[i].bytes);
            struct json *j = meter_sample(&m, now, done, bytes);
            json_u64(j, "a_to_b", dirs[0]);
            json_u64(j, "b_to_a", dirs[1]);
            meter_end(&m, &st);
        }
    }
    percpu_stop(&fwd_state.plan, &fwd_state.job.stop);
    uint64_t drain_end = time_cycles() + time_ns_to_cycles(100000000ull);
    while (time_cycles() < drain_end)
        net_service();
    percpu_wait(&fwd_state.plan);
    fwd_result(c, time_cycles_to_ns(now - start), &st);
    return VN_EXIT_OK;
}
