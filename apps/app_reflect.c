/* app=reflect: sends every UDP frame back where it came from (testpmd
 * macswap plus IP address and UDP port swap), and a stream's stamped TCP
 * segments (ports swapped too) and ICMP echo requests (made replies),
 * batched and without a copy: the received buffer itself is queued for TX
 * and released to the RX ring in tx_done. Malformed frames are counted
 * and dropped; ARP and the stack's ICMP and TCP go to lwIP. Runs for
 * duration= (default REFLECT_DEFAULT_S) or until count= frames were
 * reflected.
 *
 * One instance per vCPU (apps/qstats.h's plan): CPU k takes its pairs'
 * frames and sends each back on the pair it came on, with its own counts;
 * each pair tracks its streams' sequence numbers (loss, reordering on the
 * way in). CPU 0 also runs lwIP, the samples and count=; frames for lwIP
 * on an AP's pair are counted (not_ours) and dropped. */
#include <stdio.h>

#include "apps/app_config.h"
#include "apps/app_list.h"
#include "apps/apps_common.h"
#include "apps/apps_net.h"
#include "apps/percpu.h"
#include "apps/qstats.h"
#include "apps/relay.h"
#include "kernel/exit.h"
#include "kernel/io.h"
#include "kernel/result.h"
#include "kernel/time.h"
#include "net/net.h"
#include "net/pkt.h"

#define REFLECT_STREAMS   1024
#define REFLECT_DEFAULT_S 10
#define DHCP_CLIENT_PORT  68

/* One CPU's state: the judge's context while it works on pair q. */
struct reflect_cpu {
    struct qstats *q;    /* the pair of the burst being judged */
    bool lwip;           /* CPU 0: lwIP's frames go to it */
    struct qstats_rx rx; /* every frame received */
} __attribute__((aligned(64)));

static struct reflect {
    struct net_if *nif; /* whose MAC the reflected frames leave from */
    struct qstats_plan plan;
    struct qstats q[VNET_MAX_PAIRS];
    struct reflect_cpu cpu[SMP_MAX_CPUS];
    struct percpu_job job; /* the APs' loop: end, count=, stop, halts */
    bool dhcp;             /* dhcp=: frames to the DHCP client port are lwIP's */
} reflect_state;

/* A reflected frame's stamp, when it has one, into its stream's record
 * (loss and reordering on the way in). */
static void reflect_count(struct reflect_cpu *w, const uint8_t *f, const struct pkt_info *pi)
{
    uint32_t id = 0;
    uint64_t seq = 0;
    bool hdr = pkt_payload_hdr(f, pi, &id, &seq);
    qstats_seq(w->q, hdr, id, seq);
}

/* UDP frames and streams' TCP segments and echo requests (PKT_STAMPED)
 * are swapped in place and sent back; malformed ones dropped; the rest
 * (ARP, the stack's ICMP and TCP, DHCP answers, stamped echo replies) go
 * to lwIP on CPU 0. */
static enum relay_verdict reflect_judge(void *ctx, const struct vnet_rx *rx)
{
    struct reflect_cpu *w = ctx;
    struct pkt_info pi;
    uint8_t *f = rx->frame;
    enum pkt_kind k = pkt_parse(f, rx->len, true, &pi);
    w->rx.kinds[k]++;
    w->rx.wire_rx++;
    w->rx.wire_rx_bytes += rx->len;
    if (k == PKT_UDP && !(reflect_state.dhcp && pi.dport == DHCP_CLIENT_PORT)) {
        reflect_count(w, f, &pi);
        pkt_udp_reflect(f, &pi, net_if_mac(reflect_state.nif));
        return RELAY_SEND;
    }
    if (k == PKT_STAMPED && pkt_stamped_reflect(f, &pi, net_if_mac(reflect_state.nif))) {
        reflect_count(w, f, &pi);
        return RELAY_SEND;
    }
    if (k == PKT_BAD_LEN || k == PKT_BAD_HDR || k == PKT_BAD_CSUM)
        return RELAY_DROP;
    if (w->lwip)
        return RELAY_LWIP;
    w->q->not_ours++;
    return RELAY_DROP;
}

/* One burst on each of CPU k's pairs, its TX reclaimed; frames taken. */
static int reflect_round(unsigned k, uint64_t now)
{
    struct reflect_cpu *w = &reflect_state.cpu[k];
    struct net_if *nif = reflect_state.nif;
    int taken = 0;
    for (unsigned p = 0; p < reflect_state.plan.npairs; p++) {
        if (reflect_state.plan.cpu_of[p] != k)
            continue;
        struct qstats *q = &reflect_state.q[p];
        struct relay_burst b;
        w->q = q;
        relay_burst_q(nif, nif, p, reflect_judge, w, &b);
        if (b.queued) {
            VN_WRITE_ONCE(q->bytes, q->bytes + b.bytes);
            VN_WRITE_ONCE(q->packets, q->packets + (uint64_t)b.sent);
            q->tx_dropped += (uint64_t)(b.queued - b.sent);
            if (!w->rx.first)
                w->rx.first = now;
            w->rx.last = now;
        }
        net_check(nif, vnet_tx_reclaim_q(net_if_dev(nif), p));
        taken += b.received;
    }
    return taken;
}

/* Frames reflected so far on every pair (count=). */
static uint64_t reflect_done(void)
{
    uint64_t bytes;
    return qstats_packets_now(reflect_state.q, reflect_state.plan.npairs, &bytes);
}

/* An AP's run: its pairs until CPU 0 says stop or the deadline, halting
 * on their RX interrupts when they are empty (notify=irq|hybrid). */
static int reflect_ap(unsigned cpu, void *arg)
{
    (void)arg;
    percpu_loop(&reflect_state.job, cpu);
    /* Let the last reflected frames leave before CPU 0 reports. */
    uint64_t drain_end = time_cycles() + time_ns_to_cycles(100000000ull);
    while (time_cycles() < drain_end)
        for (unsigned p = 0; p < reflect_state.plan.npairs; p++)
            if (reflect_state.plan.cpu_of[p] == cpu)
                net_check(reflect_state.nif, vnet_tx_reclaim_q(net_if_dev(reflect_state.nif), p));
    return 0;
}

/* Every CPU's own counts added up, and the span of the traffic. */
static void reflect_add_up(struct qstats_rx *t)
{
    *t = (struct qstats_rx){0};
    for (unsigned k = 0; k < reflect_state.plan.ncpu; k++)
        qstats_rx_add(t, &reflect_state.cpu[k].rx);
}

/* A pair's TX: its ring-full count and halts. */
static void reflect_queue_json(struct json *j, const struct qstats *q, void *ctx)
{
    json_u64(j, "tx_dropped", q->tx_dropped);
    apps_tx_ring_json(j, ctx, q->queue);
}

static void reflect_result(const struct app_config *c, uint64_t ns, const struct qstats_rx *w)
{
    struct qstats_total t;
    qstats_sum(reflect_state.q, reflect_state.plan.npairs, &t);
    app_summary("reflect", t.packets, t.bytes, ns);
    struct json *j = app_result_begin(c, t.packets, t.bytes, ns);
    app_wire_json(j, t.packets, t.bytes, w->wire_rx, w->wire_rx_bytes);
    json_u64(j, "tx_dropped", t.tx_dropped);
    json_u64(j, "malformed", qstats_rx_malformed(w));
    json_u64(j, "not_ours", t.not_ours);
    json_u64(j, "lost", t.seq.lost);
    json_u64(j, "reorder", t.seq.reorder);
    qstats_rx_kinds_json(j, w);
    qstats_json(j, reflect_state.q, reflect_state.plan.npairs, reflect_queue_json,
                net_if_dev(reflect_state.nif));
    app_result_end(j);
}

static void reflect_setup(const struct app_config *c)
{
    reflect_state.nif = net_if_get(0);
    reflect_state.dhcp = c->dhcp;
    percpu_plan("reflect", net_if_dev(reflect_state.nif), &reflect_state.plan);
    reflect_state.job = (struct percpu_job){.plan = &reflect_state.plan,
                                            .dev = {net_if_dev(reflect_state.nif)},
                                            .ndev = 1,
                                            .round = reflect_round,
                                            .done = reflect_done,
                                            .count = c->count,
                                            .tx_holds_rx = true};
    percpu_job_ready(&reflect_state.job);
    for (unsigned p = 0; p < reflect_state.plan.npairs; p++)
        if (qstats_init(&reflect_state.q[p], p, reflect_state.plan.cpu_of[p], REFLECT_STREAMS) < 0)
            vn_fatal(VN_EXIT_OOM, "reflect: no memory for %d streams", REFLECT_STREAMS);
    reflect_state.cpu[0].lwip = true;
}

int app_reflect_main(const struct app_config *c)
{
    apps_net_init(c, 1, 0);
    reflect_setup(c);
    struct meter m;
    meter_start(&m, c);
    uint64_t start = m.t0, now = start, packets = 0, bytes = 0;
    uint64_t end = app_deadline(c, start, REFLECT_DEFAULT_S);
    uint64_t count = c->count ? c->count : UINT64_MAX;
    uint64_t service_every = time_ns_to_cycles(500000u), next_service = start;
    printf("reflect: swapping MAC, IP and UDP ports of every UDP frame, %u CPU%s\n",
           reflect_state.plan.ncpu, reflect_state.plan.ncpu > 1 ? "s" : "");
    reflect_state.job.end = end;
    percpu_start("reflect", &reflect_state.plan, reflect_ap, NULL);

    while (packets < count) {
        now = time_cycles();
        if (now >= end)
            break;
        int n = reflect_round(0, now);
        packets = qstats_packets_now(reflect_state.q, reflect_state.plan.npairs, &bytes);
        if (n < NET_RX_BATCH || now >= next_service) {
            net_service();
            next_service = now + service_every;
        }
        /* Empty rings: halt (notify=irq|hybrid) until a frame on CPU 0's
         * pairs, an AP's wake at count=, the next sample or the end. */
        if (n == 0 && percpu_may_halt(&reflect_state.job, 0))
            net_idle(m.next < end ? m.next : end);
        if (meter_due(&m, now)) {
            struct json *j = meter_sample(&m, now, packets, bytes);
            if (reflect_state.plan.ncpu == 1) {
                struct qstats_total t;
                qstats_sum(reflect_state.q, reflect_state.plan.npairs, &t);
                json_u64(j, "tx_dropped", t.tx_dropped);
                json_u64(j, "malformed", qstats_rx_malformed(&reflect_state.cpu[0].rx));
            }
            result_end();
        }
    }
    percpu_stop(&reflect_state.plan, &reflect_state.job.stop);
    /* Let the last reflected frames leave before the result. */
    uint64_t drain_end = time_cycles() + time_ns_to_cycles(100000000ull);
    while (time_cycles() < drain_end)
        net_service();
    percpu_wait(&reflect_state.plan);
    struct qstats_rx w;
    reflect_add_up(&w);
    uint64_t ns = w.first && w.last > w.first ? time_cycles_to_ns(w.last - w.first)
                                              : time_cycles_to_ns(now - start);
    reflect_result(c, ns, &w);
    return VN_EXIT_OK;
}
