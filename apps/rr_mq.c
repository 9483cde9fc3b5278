/* The UDP rr server, one instance per vCPU (docs/apps.md, "rr"): CPU k
 * takes its pairs' requests (UDP to dst_port=) and answers each on the
 * pair it came on, in place and without a copy, as reflect does: addresses
 * and ports swapped, the payload resp_size bytes that start with the
 * request's transaction number, new IP and UDP lengths, the IP checksum
 * recomputed, the UDP checksum 0 (none, RFC 768). Each pair counts its
 * transactions (apps/qstats.h); lwIP (ARP, ICMP) runs on CPU 0 only, and
 * what is not a request on an AP's pair is counted (not_ours) and
 * dropped. Ends at duration=, count= transactions, or RR_MQ_IDLE_S after
 * the last request once one came. */
#include <stdio.h>
#include <string.h>

#include "apps/app_config.h"
#include "apps/apps_common.h"
#include "apps/apps_net.h"
#include "apps/percpu.h"
#include "apps/qstats.h"
#include "apps/rr_mq.h"
#include "kernel/csum.h"
#include "kernel/exit.h"
#include "kernel/io.h"
#include "kernel/result.h"
#include "kernel/time.h"
#include "net/net.h"
#include "net/pkt.h"

#define RR_MQ_DEFAULT_S 10
#define RR_MQ_IDLE_S    2
#define RR_MQ_ID_LEN    8

struct rr_mq_cpu {
    uint64_t first, last; /* cycles of its first and last request */
} __attribute__((aligned(64)));

static struct rr_mq {
    struct net_if *nif;
    struct qstats_plan plan;
    struct qstats q[VNET_MAX_PAIRS]; /* packets: answers sent */
    struct rr_mq_cpu cpu[SMP_MAX_CPUS];
    uint16_t port;
    uint32_t resp, id_len, max_frame;
    struct percpu_job job; /* the APs' loop: end, count=, stop, halts */
} rr_mq;

bool rr_mq_wanted(const struct app_config *c)
{
    bool ip4 = c->role == CFG_ROLE_SERVER || !app_config_given(c, "dst_ip6");
    /* netif_vlan= tags lwIP's frames only: its UDP rr stays in lwIP */
    return c->proto == CFG_PROTO_UDP && ip4 && !c->netif_vlan && smp_cpus_up() > 1 && c->queues > 1;
}

/* A request turned into its answer in place; the answer's length, or 0
 * when it does not fit the buffer. */
static uint32_t rr_mq_answer(uint8_t *f, const struct pkt_info *pi)
{
    uint32_t len = pi->payload_off + rr_mq.resp;
    if (len > rr_mq.max_frame)
        return 0;
    pkt_udp_reflect(f, pi, net_if_mac(rr_mq.nif));
    uint32_t keep = pi->payload_len < rr_mq.id_len ? pi->payload_len : rr_mq.id_len;
    memset(f + pi->payload_off + keep, 0, rr_mq.resp - keep);
    uint32_t ihl = pi->l4_off - pi->ip_off;
    wr16(f + pi->ip_off + 2, (uint16_t)(len - pi->ip_off));
    wr16(f + pi->ip_off + 10, 0);
    /* a native sum stored natively has the network-order bytes (csum.h) */
    uint16_t c = (uint16_t)~csum_fold16(csum_partial(f + pi->ip_off, ihl, 0));
    memcpy(f + pi->ip_off + 10, &c, sizeof(c));
    wr16(f + pi->l4_off + 4, (uint16_t)(UDP_HLEN + rr_mq.resp));
    wr16(f + pi->l4_off + 6, 0);
    return len;
}

/* One burst from pair p: requests answered on p, the rest to lwIP (CPU
 * 0) or dropped; the frames taken. */
static int rr_mq_burst(unsigned k, unsigned p, uint64_t now)
{
    struct vnet_dev *d = net_if_dev(rr_mq.nif);
    struct qstats *q = &rr_mq.q[p];
    struct vnet_rx rx[NET_RX_BATCH];
    struct vnet_tx tx[NET_RX_BATCH];
    int n = net_check(rr_mq.nif, vnet_rx_burst_q(d, p, rx, NET_RX_BATCH)), nt = 0;
    for (int i = 0; i < n; i++) {
        struct pkt_info pi;
        enum pkt_kind kind = pkt_parse(rx[i].frame, rx[i].len, true, &pi);
        uint32_t len = 0;
        /* IPv4 only (rr_mq_wanted): IPv6 UDP is lwIP's */
        bool udp4 = kind == PKT_UDP && pi.ipv == 4;
        if (udp4 && pi.dport == rr_mq.port)
            len = rr_mq_answer(rx[i].frame, &pi);
        if (len) {
            tx[nt++] = (struct vnet_tx){
                .frame = rx[i].frame, .len = len, .cookie = net_cookie_rx(rr_mq.nif, rx[i].buf)};
        } else if (k == 0 && !udp4) {
            net_input(rr_mq.nif, &rx[i]);
        } else {
            q->not_ours++;
            vnet_rx_release(d, rx[i].buf);
        }
    }
    int sent = nt ? net_check(rr_mq.nif, vnet_tx_burst_q(d, p, tx, nt)) : 0;
    for (int i = sent < 0 ? 0 : sent; i < nt; i++)
        vnet_rx_release(d, (uint32_t)((uintptr_t)tx[i].cookie >> NET_COOKIE_BUF_SHIFT));
    if (sent > 0) {
        VN_WRITE_ONCE(q->packets, q->packets + (uint64_t)sent);
        for (int i = 0; i < sent; i++)
            q->bytes += tx[i].len;
        struct rr_mq_cpu *w = &rr_mq.cpu[k];
        w->first = w->first ? w->first : now;
        VN_WRITE_ONCE(w->last, now);
    }
    q->tx_dropped += (uint64_t)(nt - (sent < 0 ? 0 : sent));
    net_check(rr_mq.nif, vnet_tx_reclaim_q(d, p));
    return n > 0 ? n : 0;
}

static int rr_mq_round(unsigned k, uint64_t now)
{
    int taken = 0;
    for (unsigned p = 0; p < rr_mq.plan.npairs; p++)
        if (rr_mq.plan.cpu_of[p] == k)
            taken += rr_mq_burst(k, p, now);
    return taken;
}

/* An AP's run: its pairs until CPU 0 says stop or the deadline, halting
 * on their RX interrupts when they are empty (notify=irq|hybrid). */
static int rr_mq_ap(unsigned cpu, void *arg)
{
    (void)arg;
    percpu_loop(&rr_mq.job, cpu);
    return 0;
}

/* Answers so far on every pair, and the last request on any CPU. */
static uint64_t rr_mq_now(uint64_t *last)
{
    uint64_t n = 0;
    *last = 0;
    for (unsigned p = 0; p < rr_mq.plan.npairs; p++)
        n += VN_READ_ONCE(rr_mq.q[p].packets);
    for (unsigned k = 0; k < rr_mq.plan.ncpu; k++) {
        uint64_t l = VN_READ_ONCE(rr_mq.cpu[k].last);
        *last = l > *last ? l : *last;
    }
    return n;
}

/* Answers so far on every pair (count=). */
static uint64_t rr_mq_done(void)
{
    uint64_t last;
    return rr_mq_now(&last);
}

static void rr_mq_result(const struct app_config *c, uint64_t ns)
{
    struct qstats_total t;
    qstats_sum(rr_mq.q, rr_mq.plan.npairs, &t);
    double tps = app_per_s(t.packets, ns);
    printf("rr: udp server: %llu transactions, %.0f/s, %u CPUs\n", (unsigned long long)t.packets,
           tps, rr_mq.plan.ncpu);
    /* packets and bytes: messages both ways, as the lwIP server counts */
    struct json *j = app_result_begin(c, 2 * t.packets, 2 * t.bytes, ns);
    json_str(j, "role", "server");
    json_str(j, "proto", "udp");
    json_u64(j, "req_size", c->req_size);
    json_u64(j, "resp_size", c->resp_size);
    json_u64(j, "transactions", t.packets);
    json_double(j, "tps", tps);
    json_u64(j, "tx_dropped", t.tx_dropped);
    json_u64(j, "not_ours", t.not_ours);
    qstats_json(j, rr_mq.q, rr_mq.plan.npairs, NULL, NULL);
    app_result_end(j);
}

static void rr_mq_setup(const struct app_config *c)
{
    rr_mq.nif = net_if_get(0);
    rr_mq.port = c->dst_port;
    rr_mq.resp = (uint32_t)c->resp_size;
    rr_mq.id_len = (uint32_t)(c->req_size < c->resp_size ? c->req_size : c->resp_size);
    rr_mq.id_len = rr_mq.id_len < RR_MQ_ID_LEN ? rr_mq.id_len : RR_MQ_ID_LEN;
    rr_mq.max_frame = vnet_mtu(net_if_dev(rr_mq.nif)) + ETH_HLEN;
    if (PKT_HDRS_LEN + rr_mq.resp > rr_mq.max_frame)
        vn_fatal(VN_EXIT_CONFIG, "rr: resp_size=%u does not fit one frame (MTU %u)", rr_mq.resp,
                 (unsigned)vnet_mtu(net_if_dev(rr_mq.nif)));
    percpu_plan("rr", net_if_dev(rr_mq.nif), &rr_mq.plan);
    rr_mq.job = (struct percpu_job){.plan = &rr_mq.plan,
                                    .dev = {net_if_dev(rr_mq.nif)},
                                    .ndev = 1,
                                    .round = rr_mq_round,
                                    .done = rr_mq_done,
                                    .count = c->count,
                                    .tx_holds_rx = true};
    percpu_job_ready(&rr_mq.job);
    for (unsigned p = 0; p < rr_mq.plan.npairs; p++)
        if (qstats_init(&rr_mq.q[p], p, rr_mq.plan.cpu_of[p], 0) < 0)
            vn_fatal(VN_EXIT_OOM, "rr: no memory");
}

int rr_mq_server(const struct app_config *c)
{
    /* no offloads: every frame is one buffer with its checksums done */
    apps_net_init(c, 1, 0);
    rr_mq_setup(c);
    uint64_t start = time_cycles(), now = start, last = 0;
    uint64_t end = app_deadline(c, start, RR_MQ_DEFAULT_S);
    uint64_t count = c->count ? c->count : UINT64_MAX, done = 0;
    uint64_t idle = RR_MQ_IDLE_S * time_tsc_hz;
    uint64_t service_every = time_ns_to_cycles(500000u), next_service = start;
    printf("rr: udp server on port %u, raw path, %u CPUs on %u pairs\n", (unsigned)rr_mq.port,
           rr_mq.plan.ncpu, rr_mq.plan.npairs);
    rr_mq.job.end = end;
    percpu_start("rr", &rr_mq.plan, rr_mq_ap, NULL);
    while (done < count) {
        now = time_cycles();
        if (now >= end || (last && now > last && now - last > idle))
            break;
        int n = rr_mq_round(0, now);
        done = rr_mq_now(&last);
        if (now >= next_service) {
            net_service();
            next_service = now + service_every;
        }
        /* Empty rings: halt (notify=irq|hybrid) until a request on CPU
         * 0's pairs, an AP's wake at count=, the idle end or the end. */
        if (n == 0 && percpu_may_halt(&rr_mq.job, 0))
            net_idle(last && last + idle < end ? last + idle + 1 : end);
    }
    percpu_stop(&rr_mq.plan, &rr_mq.job.stop);
    percpu_wait(&rr_mq.plan);
    uint64_t first = 0;
    for (unsigned k = 0; k < rr_mq.plan.ncpu; k++)
        if (rr_mq.cpu[k].first && (!first || rr_mq.cpu[k].first < first))
            first = rr_mq.cpu[k].first;
    rr_mq_now(&last);
    rr_mq_result(c, first && last > first ? time_cycles_to_ns(last - first)
                                          : time_cycles_to_ns(now - start));
    if (!rr_mq_now(&last)) {
        printf("rr: no transaction completed\n");
        return VN_EXIT_TEST_FAILED;
    }
    return VN_EXIT_OK;
}
