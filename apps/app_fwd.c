/* app=fwd: L2 io-forwarder between two virtio-net devices, both
 * directions, batched, zero-copy: a frame received on one device is queued
 * on the other as is, and its buffer goes back to the first device's RX
 * ring in the tx_done callback. Frames addressed to us on the first device
 * (ARP for our IP, IPv4 to our IP) go to lwIP so the forwarder answers
 * ping. Runs for duration= (default FWD_DEFAULT_S) or count= frames, or
 * until idle_ms= passed without a frame in on the first device once
 * frames came (the end of a PVP tester's traffic).
 *
 * Where frames waited, per direction: RX bursts that came back full (more
 * were queued in the input ring: the forwarder came round late), bursts
 * the output ring could not take whole (the backend had not emptied it:
 * the rest were dropped), and the most frames left in flight on the output
 * ring after a burst. And how long the vCPU did not come round at all
 * (apps/stall.h): the host's share of the input ring's overflows. */
#include <stdio.h>
#include <string.h>

#include "apps/app_config.h"
#include "apps/app_list.h"
#include "apps/apps_common.h"
#include "apps/apps_net.h"
#include "apps/relay.h"
#include "apps/stall.h"
#include "kernel/exit.h"
#include "kernel/result.h"
#include "kernel/time.h"
#include "net/net.h"
#include "net/pkt.h"

#define FWD_DEFAULT_S 10

struct fwd_dir {
    uint64_t packets, bytes, dropped, runts, local;
    uint64_t rx_bursts, rx_full, tx_full, tx_in_flight_max;
    bool lwip;   /* lwIP lives on the input device: frames for me go to it */
    uint32_t me; /* our address (host byte order) */
};

static struct fwd_dir dir[2];

static enum relay_verdict fwd_judge(void *ctx, const struct vnet_rx *rx)
{
    struct fwd_dir *d = ctx;
    if (rx->len < ETH_HLEN) {
        d->runts++;
        return RELAY_DROP;
    }
    if (d->lwip && pkt_for_local(rx->frame, rx->len, d->me)) {
        d->local++;
        return RELAY_LWIP;
    }
    return RELAY_SEND;
}

static void fwd_step(struct net_if *in, struct net_if *out, struct fwd_dir *d)
{
    struct relay_burst b;
    relay_burst(in, out, fwd_judge, d, &b);
    if (b.received > 0) {
        d->rx_bursts++;
        d->rx_full += b.received == NET_RX_BATCH;
    }
    if (b.queued) {
        d->bytes += b.bytes;
        d->packets += (uint64_t)b.sent;
        d->dropped += (uint64_t)(b.queued - b.sent);
        d->tx_full += b.sent < b.queued;
        int fl = vnet_tx_in_flight(net_if_dev(out));
        if (fl > 0 && (uint64_t)fl > d->tx_in_flight_max)
            d->tx_in_flight_max = (uint64_t)fl;
    }
    net_check(out, vnet_tx_reclaim(net_if_dev(out)));
}

static void dir_json(struct json *j, const char *key, const struct fwd_dir *d)
{
    json_obj_begin(j, key);
    json_u64(j, "packets", d->packets);
    json_u64(j, "bytes", d->bytes);
    json_u64(j, "tx_dropped", d->dropped);
    json_u64(j, "runts", d->runts);
    json_u64(j, "to_lwip", d->local);
    json_u64(j, "rx_bursts", d->rx_bursts);
    json_u64(j, "rx_full", d->rx_full);
    json_u64(j, "tx_full", d->tx_full);
    json_u64(j, "tx_in_flight_max", d->tx_in_flight_max);
    json_obj_end(j);
}

int app_fwd_main(const struct app_config *c)
{
    apps_net_init(c, 2, 0);
    struct net_if *a = net_if_get(0), *b = net_if_get(1);
    for (int i = 0; i < 2; i++) {
        dir[i].lwip = net_if_has_lwip(i ? b : a);
        dir[i].me = net_ip();
    }
    struct meter m;
    meter_start(&m, c);
    uint64_t start = m.t0, now = start;
    uint64_t end = app_deadline(c, start, FWD_DEFAULT_S);
    uint64_t count = c->count ? c->count : UINT64_MAX;
    uint64_t service_every = time_ns_to_cycles(500000u), next_service = start;
    uint64_t idle = time_ns_to_cycles(c->idle_ms * 1000000ull), last_in = 0;
    printf("fwd: %s <-> %s\n", vnet_name(net_if_dev(a)), vnet_name(net_if_dev(b)));

    /* Stalls from here: the console line above was the app's own time. */
    struct stall st;
    app_stall_start(&st);
    while (dir[0].packets + dir[1].packets < count) {
        now = time_cycles();
        stall_round(&st, now);
        if (now >= end || (idle && last_in && now - last_in >= idle))
            break;
        uint64_t bursts = dir[0].rx_bursts;
        fwd_step(a, b, &dir[0]);
        if (dir[0].rx_bursts != bursts)
            last_in = now;
        fwd_step(b, a, &dir[1]);
        if (now >= next_service) {
            net_service();
            next_service = now + service_every;
        }
        if (meter_due(&m, now)) {
            struct json *j =
                meter_sample(&m, now, dir[0].packets + dir[1].packets, dir[0].bytes + dir[1].bytes);
            json_u64(j, "a_to_b", dir[0].packets);
            json_u64(j, "b_to_a", dir[1].packets);
            meter_end(&m, &st);
        }
    }
    uint64_t drain_end = time_cycles() + time_ns_to_cycles(100000000ull);
    while (time_cycles() < drain_end)
        net_service();
    uint64_t ns = time_cycles_to_ns(now - start);
    uint64_t packets = dir[0].packets + dir[1].packets, bytes = dir[0].bytes + dir[1].bytes;
    app_summary("fwd", packets, bytes, ns);
    struct json *j = app_result_begin(c, packets, bytes, ns);
    json_u64(j, "tx_dropped", dir[0].dropped + dir[1].dropped);
    dir_json(j, "a_to_b", &dir[0]);
    dir_json(j, "b_to_a", &dir[1]);
    stall_json(j, &st, time_tsc_hz);
    app_result_end(j);
    return VN_EXIT_OK;
}
