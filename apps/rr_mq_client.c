/* The UDP rr client, one instance per vCPU (docs/apps.md, "rr"): session
 * i sends from port RR_MQ_CLIENT_PORT + i (src_port= + i) to dst_ip=:
 * dst_port= and keeps one request in flight. Its answers come on the pair
 * the device's RSS puts them on (vnet_flow_pair of the answer's fields),
 * so the session belongs to that pair's CPU, which sends its requests on
 * the same pair through the pair's bound TX slots and takes its answers
 * there. Each CPU has its own latency histogram and each pair its own
 * counts (apps/qstats.h: packets are the pair's transactions), added up
 * by CPU 0 at the end: no lock anywhere. count= is shared out over the
 * sessions (rr_req_budget), so every pair's transactions are known in
 * advance. lwIP (ARP) runs on CPU 0; what is not an answer on an AP's
 * pair is counted (not_ours) and dropped, an answer on a pair other than
 * its session's (wrong_queue) too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app_config.h"
#include "apps/apps_common.h"
#include "apps/apps_net.h"
#include "apps/hist.h"
#include "apps/percpu.h"
#include "apps/qstats.h"
#include "apps/rr_mq.h"
#include "apps/rr_req.h"
#include "apps/rr_result.h"
#include "kernel/exit.h"
#include "kernel/io.h"
#include "kernel/json.h"
#include "kernel/result.h"
#include "kernel/time.h"
#include "net/net.h"

#define RR_MQ_CLIENT_PORT 49152 /* session i's source port: this + i */
#define RR_MQ_CLIENT_S    10
#define RR_MQ_TIMEOUT_MS  200 /* a request or answer lost: a new one */

struct rr_mq_sess {
    uint64_t id;     /* the transaction in flight */
    uint64_t t_send; /* cycles */
    uint64_t budget, done;
    bool busy; /* a request is in flight */
    uint8_t pair;
    uint8_t *frame; /* its request, built once */
};

/* A pair's client counts beside its qstats (written by its CPU only). */
struct rr_mq_cq {
    uint64_t requests, answers, req_bytes, resp_bytes;
    uint64_t timeouts, late, unsent, wrong_queue;
    struct vnet_txslots slots;
} __attribute__((aligned(64)));

struct rr_mq_ccpu {
    struct hist lat; /* ns */
    uint16_t *order; /* its sessions */
    unsigned nsess;
} __attribute__((aligned(64)));

static struct rr_mq_client {
    struct net_if *nif;
    struct qstats_plan plan;
    struct qstats q[VNET_MAX_PAIRS];
    struct rr_mq_cq cq[VNET_MAX_PAIRS];
    struct rr_mq_ccpu cpu[SMP_MAX_CPUS];
    struct rr_mq_sess *s;
    unsigned n;
    uint16_t port, base;
    uint32_t server, req, resp, id_len, frame_len;
    uint64_t timeout;
    struct percpu_job job; /* the APs' loop: end, count=, stop, halts */
} rc;

/* Sends the next request of sessions idx[0..n) (all on pair p). */
static void rrc_send(unsigned p, const uint16_t *idx, int n)
{
    struct vnet_dev *d = net_if_dev(rc.nif);
    struct rr_mq_cq *cq = &rc.cq[p];
    uint16_t first = 0, lens[NET_RX_BATCH];
    int k = net_check(rc.nif, vnet_txslots_reserve_q(d, p, n, &first));
    k = k < 0 ? 0 : k;
    uint64_t now = time_cycles();
    for (int i = 0; i < n; i++) {
        struct rr_mq_sess *s = &rc.s[idx[i]];
        s->id++;
        s->t_send = now;
        s->busy = true;
        if (i >= k) {
            cq->unsent++; /* its timeout sends it again */
            continue;
        }
        unsigned slot = (first + (unsigned)i) % cq->slots.num;
        uint8_t *f = cq->slots.frame0 + (size_t)slot * cq->slots.stride;
        memcpy(f, s->frame, rc.frame_len);
        rr_req_set_id(f, s->id, rc.id_len);
        cq->slots.tag[slot] = 0;
        lens[i] = (uint16_t)rc.frame_len;
    }
    if (k && net_check(rc.nif, vnet_txslots_send_q(d, p, k, lens, n - k)) < 0)
        vn_fatal(VN_EXIT_INTERNAL, "rr: TX slots of pair %u", p);
    cq->requests += (uint64_t)k;
    cq->req_bytes += (uint64_t)k * rc.req;
}

/* An answer a on pair p: a transaction when it is its session's current
 * one, on its pair; the session's next request queued in next. */
static void rrc_answer(unsigned k, unsigned p, const struct rr_req_answer *a, uint64_t now,
                       uint16_t *next, int *nn)
{
    struct rr_mq_cq *cq = &rc.cq[p];
    struct rr_mq_sess *s = &rc.s[a->session];
    cq->answers++;
    cq->resp_bytes += rc.resp;
    if (s->pair != p) {
        cq->wrong_queue++;
        return;
    }
    uint64_t mask = rc.id_len >= 8 ? UINT64_MAX : (((uint64_t)1 << (8 * rc.id_len)) - 1);
    if (!s->busy || !a->whole || ((a->id ^ s->id) & mask)) {
        cq->late++;
        return;
    }
    s->busy = false;
    s->done++;
    hist_add(&rc.cpu[k].lat, app_cycles_ns(now - s->t_send));
    VN_WRITE_ONCE(rc.q[p].packets, rc.q[p].packets + 1);
    rc.q[p].bytes += rc.resp;
    if (s->done < s->budget)
        next[(*nn)++] = (uint16_t)a->session;
}

/* One burst from pair p: answers taken, the sessions' next requests
 * sent; the rest to lwIP (CPU 0) or dropped. The frames taken. */
static int rrc_burst(unsigned k, unsigned p)
{
    struct vnet_dev *d = net_if_dev(rc.nif);
    struct vnet_rx rx[NET_RX_BATCH];
    uint16_t next[NET_RX_BATCH];
    int n = net_check(rc.nif, vnet_rx_burst_q(d, p, rx, NET_RX_BATCH)), nn = 0;
    uint64_t now = time_cycles();
    for (int i = 0; i < n; i++) {
        struct pkt_info pi;
        struct rr_req_answer a = {.session = -1};
        enum pkt_kind kind = pkt_parse(rx[i].frame, rx[i].len, true, &pi);
        bool udp4 = kind == PKT_UDP && pi.ipv == 4; /* IPv6 UDP is lwIP's */
        if (udp4)
            rr_req_classify(rx[i].frame, &pi, rc.server, rc.port, rc.base, rc.n, rc.resp, rc.id_len,
                            &a);
        if (a.session >= 0) {
            rrc_answer(k, p, &a, now, next, &nn);
        } else if (k == 0 && !udp4) {
            net_input(rc.nif, &rx[i]);
            continue;
        } else {
            rc.q[p].not_ours++;
        }
        vnet_rx_release(d, rx[i].buf);
    }
    if (nn)
        rrc_send(p, next, nn);
    net_check(rc.nif, vnet_tx_reclaim_q(d, p));
    return n > 0 ? n : 0;
}

/* CPU k's sessions whose request or answer was lost: sent again. */
static void rrc_timeouts(unsigned k, uint64_t now)
{
    const struct rr_mq_ccpu *w = &rc.cpu[k];
    for (unsigned i = 0; i < w->nsess; i++) {
        uint16_t idx = w->order[i];
        struct rr_mq_sess *s = &rc.s[idx];
        if (s->busy && now - s->t_send > rc.timeout) {
            rc.cq[s->pair].timeouts++;
            rrc_send(s->pair, &idx, 1);
        }
    }
}

/* CPU k's first requests, one per session with a budget. */
static void rrc_start(unsigned k)
{
    const struct rr_mq_ccpu *w = &rc.cpu[k];
    for (unsigned i = 0; i < w->nsess; i++)
        if (rc.s[w->order[i]].budget)
            rrc_send(rc.s[w->order[i]].pair, &w->order[i], 1);
}

/* When CPU k's first request in flight times out (0: none is). */
static uint64_t rrc_due(unsigned k)
{
    const struct rr_mq_ccpu *w = &rc.cpu[k];
    uint64_t due = 0;
    for (unsigned i = 0; i < w->nsess; i++) {
        const struct rr_mq_sess *s = &rc.s[w->order[i]];
        uint64_t t = s->t_send + rc.timeout + 1;
        if (s->busy && (!due || t < due))
            due = t;
    }
    return due;
}

static int rrc_round(unsigned k, uint64_t now)
{
    (void)now;
    int taken = 0;
    for (unsigned p = 0; p < rc.plan.npairs; p++)
        if (rc.plan.cpu_of[p] == k)
            taken += rrc_burst(k, p);
    rrc_timeouts(k, time_cycles());
    return taken;
}

/* Transactions so far on every pair (count=). */
static uint64_t rrc_done(void)
{
    uint64_t bytes;
    return qstats_packets_now(rc.q, rc.plan.npairs, &bytes);
}

/* An AP's run: its sessions' first requests, then its pairs until CPU 0
 * says stop or the deadline, halting on their RX interrupts until an
 * answer or the first timeout (notify=irq|hybrid). */
static int rrc_ap(unsigned cpu, void *arg)
{
    (void)arg;
    rrc_start(cpu);
    percpu_loop(&rc.job, cpu);
    return 0;
}

/* A pair's client counts and its TX ring's. */
static void rrc_queue_json(struct json *j, const struct qstats *q, void *ctx)
{
    (void)ctx;
    const struct rr_mq_cq *cq = &rc.cq[q->queue];
    json_u64(j, "transactions", q->packets);
    json_u64(j, "requests", cq->requests);
    json_u64(j, "answers", cq->answers);
    json_u64(j, "timeouts", cq->timeouts);
    json_u64(j, "late", cq->late);
    json_u64(j, "unsent", cq->unsent);
    json_u64(j, "wrong_queue", cq->wrong_queue);
    apps_tx_ring_json(j, net_if_dev(rc.nif), q->queue);
}

static void rrc_result(const struct app_config *c, uint64_t ns)
{
    struct hist lat;
    hist_init(&lat);
    for (unsigned k = 0; k < rc.plan.ncpu; k++)
        hist_merge(&lat, &rc.cpu[k].lat);
    struct rr_mq_cq t = {0};
    for (unsigned p = 0; p < rc.plan.npairs; p++) {
        const struct rr_mq_cq *cq = &rc.cq[p];
        t.requests += cq->requests;
        t.answers += cq->answers;
        t.req_bytes += cq->req_bytes;
        t.resp_bytes += cq->resp_bytes;
        t.timeouts += cq->timeouts;
        t.late += cq->late;
        t.unsent += cq->unsent;
        t.wrong_queue += cq->wrong_queue;
    }
    struct qstats_total qt;
    qstats_sum(rc.q, rc.plan.npairs, &qt);
    double tps = app_per_s(qt.packets, ns);
    printf("rr: udp client: %llu transactions, %.0f/s, p50 %.1f us, p99 %.1f us, %u CPUs\n",
           (unsigned long long)qt.packets, tps, (double)hist_quantile(&lat, 0.5) / 1e3,
           (double)hist_quantile(&lat, 0.99) / 1e3, rc.plan.ncpu);
    app_hist_lines("latency", &lat, 1.0);
    /* packets and bytes: messages both ways, as the lwIP client counts */
    struct json *j = app_result_begin(c, t.requests + t.answers, t.req_bytes + t.resp_bytes, ns);
    struct rr_result r = {
        .sessions = rc.n,
        .req_size = rc.req,
        .resp_size = rc.resp,
        .transactions = qt.packets,
        .timeouts = t.timeouts,
        .late = t.late,
        .unsent = t.unsent,
        .lat = &lat,
    };
    rr_result_json(j, &r, tps);
    json_u64(j, "wrong_queue", t.wrong_queue);
    json_u64(j, "not_ours", qt.not_ours);
    qstats_json(j, rc.q, rc.plan.npairs, rrc_queue_json, NULL);
    app_result_end(j);
}

/* Session i's flow, its pair and CPU, and its share of count=. */
static void rrc_sessions(const struct app_config *c, const struct rr_req_flow *base)
{
    struct vnet_dev *d = net_if_dev(rc.nif);
    uint64_t count = c->count ? c->count : 0;
    for (unsigned i = 0; i < rc.n; i++) {
        struct rr_mq_sess *s = &rc.s[i];
        struct rr_req_flow fl = *base;
        fl.sport = (uint16_t)(rc.base + i);
        s->frame = malloc(rc.frame_len);
        if (!s->frame)
            vn_fatal(VN_EXIT_OOM, "rr: no memory for %u sessions", rc.n);
        rr_req_build(s->frame, rc.frame_len, &fl, rc.req);
        /* the answer's fields: from the server to us */
        s->pair = (uint8_t)vnet_flow_pair(d, fl.daddr, fl.saddr, fl.dport, fl.sport);
        s->budget = count ? rr_req_budget(count, rc.n, i) : UINT64_MAX;
        struct rr_mq_ccpu *w = &rc.cpu[rc.plan.cpu_of[s->pair]];
        w->order[w->nsess++] = (uint16_t)i;
    }
}

static void rrc_setup(const struct app_config *c)
{
    rc.nif = net_if_get(0);
    struct vnet_dev *d = net_if_dev(rc.nif);
    rc.n = (unsigned)c->sessions;
    rc.port = c->dst_port;
    rc.base = app_config_given(c, "src_port") ? c->src_port : RR_MQ_CLIENT_PORT;
    if ((unsigned)rc.base + rc.n > 0x10000)
        vn_fatal(VN_EXIT_CONFIG, "rr: src_port=%u with %u sessions passes port 65535",
                 (unsigned)rc.base, rc.n);
    rc.req = (uint32_t)c->req_size;
    rc.resp = (uint32_t)c->resp_size;
    rc.id_len = rr_req_id_len(rc.req, rc.resp);
    rc.server = rd32((const uint8_t *)&c->dst_ip); /* network order in c */
    rc.timeout = time_ns_to_cycles(RR_MQ_TIMEOUT_MS * 1000000ull);
    struct rr_req_flow fl = {.saddr = net_ip(), .daddr = rc.server, .dport = rc.port};
    memcpy(fl.src_mac, net_if_mac(rc.nif), ETH_ALEN);
    apps_peer_mac(c, fl.dst_mac);
    rc.frame_len = PKT_HDRS_LEN + rc.req < PKT_MIN_FRAME ? PKT_MIN_FRAME : PKT_HDRS_LEN + rc.req;
    if (rc.req + PKT_HDRS_LEN > vnet_mtu(d) + ETH_HLEN)
        vn_fatal(VN_EXIT_CONFIG, "rr: req_size=%u does not fit one frame (MTU %u)", rc.req,
                 (unsigned)vnet_mtu(d));
    percpu_plan("rr", d, &rc.plan);
    rc.job = (struct percpu_job){.plan = &rc.plan,
                                 .dev = {d},
                                 .ndev = 1,
                                 .round = rrc_round,
                                 .due = rrc_due,
                                 .done = rrc_done,
                                 .count = c->count};
    percpu_job_ready(&rc.job);
    if (!(rc.s = calloc(rc.n, sizeof(*rc.s))))
        vn_fatal(VN_EXIT_OOM, "rr: no memory for %u sessions", rc.n);
    for (unsigned k = 0; k < rc.plan.ncpu; k++)
        if (!(rc.cpu[k].order = calloc(rc.n, sizeof(uint16_t))))
            vn_fatal(VN_EXIT_OOM, "rr: no memory for %u sessions", rc.n);
    for (unsigned p = 0; p < rc.plan.npairs; p++) {
        if (qstats_init(&rc.q[p], p, rc.plan.cpu_of[p], 0) < 0)
            vn_fatal(VN_EXIT_OOM, "rr: no memory");
        if (net_check(rc.nif, vnet_txslots_bind_q(d, p, rc.frame_len, &rc.cq[p].slots)) < 0)
            vn_fatal(VN_EXIT_INTERNAL, "rr: pair %u's TX slots do not bind", p);
    }
    for (unsigned k = 0; k < rc.plan.ncpu; k++)
        hist_init(&rc.cpu[k].lat);
    rrc_sessions(c, &fl);
}

/* CPU 0's halt ends at its first timeout, the next sample or the end. */
static uint64_t rrc_wake(const struct meter *m, uint64_t end)
{
    uint64_t wake = m->next < end ? m->next : end, due = rrc_due(0);
    return due && due < wake ? due : wake;
}

int rr_mq_client(const struct app_config *c)
{
    /* no offloads: every frame is one buffer with its checksums done */
    apps_net_init(c, 1, 0);
    rrc_setup(c);
    struct meter m;
    meter_start(&m, c);
    uint64_t start = m.t0, now = start, tr_last = 0, done = 0, bytes = 0;
    uint64_t end = app_deadline(c, start, RR_MQ_CLIENT_S);
    uint64_t count = c->count ? c->count : UINT64_MAX;
    uint64_t service_every = time_ns_to_cycles(500000u), next_service = start;
    printf("rr: udp client to port %u, raw path, %u sessions, %u CPUs on %u pairs\n",
           (unsigned)rc.port, rc.n, rc.plan.ncpu, rc.plan.npairs);
    rc.job.end = end;
    percpu_start("rr", &rc.plan, rrc_ap, NULL);
    rrc_start(0);
    while (done < count) {
        now = time_cycles();
        if (now >= end)
            break;
        int n = rrc_round(0, now);
        done = qstats_packets_now(rc.q, rc.plan.npairs, &bytes);
        if (now >= next_service) {
            net_service();
            next_service = now + service_every;
        }
        /* Nothing came: halt (notify=irq|hybrid) until an answer on CPU
         * 0's pairs, a timeout, an AP's wake at count=, the next sample
         * or the end. */
        if (n == 0 && percpu_may_halt(&rc.job, 0))
            net_idle(rrc_wake(&m, end));
        if (meter_due(&m, now)) {
            struct json *j = meter_sample(&m, now, done, bytes);
            json_u64(j, "transactions", done);
            json_double(j, "tps", app_per_s(done - tr_last, m.span_ns));
            tr_last = done;
            result_end();
        }
    }
    percpu_stop(&rc.plan, &rc.job.stop);
    percpu_wait(&rc.plan);
    rrc_result(c, time_cycles_to_ns(now - start));
    if (!qstats_packets_now(rc.q, rc.plan.npairs, &bytes)) {
        printf("rr: no transaction completed\n");
        return VN_EXIT_NETWORK;
    }
    return VN_EXIT_OK;
}
