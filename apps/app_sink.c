/* app=sink: counts UDP frames per stream on the raw path; loss,
 * duplicates and reordering from the payload's sequence numbers.
 * count=N: exits 0 as soon as N frames arrived, with "test failed" when
 * duration= (default SINK_TIMEOUT_S) passes first. Without count= it runs
 * for duration= (default SINK_DEFAULT_S). Malformed frames are counted
 * by kind and dropped; ARP, ICMP and TCP go to lwIP.
 *
 * One instance per vCPU (apps/qstats.h's plan): CPU k polls the pairs it
 * owns with its own counts, each pair its own streams, so loss and
 * reordering are per pair; CPU 0 also runs lwIP, the samples and count=,
 * and adds the pairs up at the end. With notify=irq|hybrid each CPU halts
 * on an empty round until its own pairs' interrupts (percpu_plan sends
 * them to it). Frames for lwIP that the device put
 * on an AP's pair are counted (not_ours) and dropped: lwIP is CPU 0's. */
#include <stdio.h>
#include <stdlib.h>

#include "apps/app_config.h"
#include "apps/app_list.h"
#include "apps/apps_common.h"
#include "apps/apps_net.h"
#include "apps/percpu.h"
#include "apps/qstats.h"
#include "apps/stall.h"
#include "kernel/exit.h"
#include "kernel/io.h"
#include "kernel/result.h"
#include "kernel/time.h"
#include "net/net.h"
#include "net/pkt.h"

#define SINK_STREAMS     1024
#define SINK_DEFAULT_S   10
#define SINK_TIMEOUT_S   30
#define DHCP_CLIENT_PORT 68

/* One CPU's counts that are not a pair's. */
struct sink_cpu {
    struct qstats_rx rx; /* every frame received */
} __attribute__((aligned(64)));

static struct sink {
    struct net_if *nif;
    struct qstats_plan plan;
    struct qstats q[VNET_MAX_PAIRS];
    struct sink_cpu cpu[SMP_MAX_CPUS];
    struct percpu_job job; /* the APs' loop: end, count=, stop, halts */
    bool dhcp;             /* dhcp=: frames to the DHCP client port are lwIP's */
    bool qreset_done;      /* qreset_at= */
} sink_state;

static inline void sink_frame(struct sink_cpu *w, struct qstats *q, const struct vnet_rx *rx,
                              bool lwip)
{
    struct net_if *nif = sink_state.nif;
    struct pkt_info pi;
    const uint8_t *f = rx->frame;
    enum pkt_kind k = pkt_parse(f, rx->len, true, &pi);
    w->rx.kinds[k]++;
    w->rx.wire_rx++;
    w->rx.wire_rx_bytes += rx->len;
    switch (k) {
    case PKT_UDP:
    case PKT_STAMPED: /* a TCP or ICMP stream's frame */
        if (k == PKT_UDP && sink_state.dhcp && pi.dport == DHCP_CLIENT_PORT)
            break;
        uint32_t id = 0;
        uint64_t seq = 0;
        bool hdr = pkt_payload_hdr(f, &pi, &id, &seq);
        qstats_frame(q, rx->len, hdr, id, seq);
        vnet_rx_release(net_if_dev(nif), rx->buf);
        return;
    case PKT_BAD_LEN:
    case PKT_BAD_HDR:
    case PKT_BAD_CSUM:
        vnet_rx_release(net_if_dev(nif), rx->buf);
        return;
    default:
        break;
    }
    if (lwip) {
        net_input(nif, rx);
    } else {
        q->not_ours++;
        vnet_rx_release(net_if_dev(nif), rx->buf);
    }
}

/* One burst from each of CPU k's pairs; the frames taken. */
static int sink_poll(unsigned k, uint64_t now)
{
    struct sink_cpu *w = &sink_state.cpu[k];
    struct vnet_rx rx[NET_RX_BATCH];
    int taken = 0;
    for (unsigned p = 0; p < sink_state.plan.npairs; p++) {
        if (sink_state.plan.cpu_of[p] != k)
            continue;
        struct qstats *q = &sink_state.q[p];
        uint64_t before = q->packets;
        int n = net_check(sink_state.nif,
                          vnet_rx_burst_q(net_if_dev(sink_state.nif), p, rx, NET_RX_BATCH));
        for (int i = 0; i < n; i++)
            sink_frame(w, q, &rx[i], k == 0);
        if (q->packets != before) {
            if (!w->rx.first)
                w->rx.first = now;
            w->rx.last = now;
        }
        taken += n > 0 ? n : 0;
    }
    return taken;
}

/* Frames counted so far on every pair (count=). */
static uint64_t sink_done(void)
{
    uint64_t bytes;
    return qstats_packets_now(sink_state.q, sink_state.plan.npairs, &bytes);
}

/* An AP's run: its pairs until CPU 0 says stop or the deadline; with
 * notify=irq|hybrid it halts on its own pairs' interrupts when they are
 * empty (percpu_loop). */
static int sink_ap(unsigned cpu, void *arg)
{
    (void)arg;
    percpu_loop(&sink_state.job, cpu);
    return 0;
}

/* Every CPU's own counts added up, and the span from the first frame on
 * any CPU to the last. */
static void sink_add_up(struct qstats_rx *t)
{
    *t = (struct qstats_rx){0};
    for (unsigned k = 0; k < sink_state.plan.ncpu; k++)
        qstats_rx_add(t, &sink_state.cpu[k].rx);
}

/* The first 16 active streams, each with the pair it came on. */
static void sink_streams_json(struct json *j)
{
    json_arr_begin(j, "per_stream");
    unsigned shown = 0;
    for (unsigned p = 0; p < sink_state.plan.npairs; p++)
        for (unsigned i = 0; i < SINK_STREAMS && shown < 16; i++) {
            const struct seq_stream *s = &sink_state.q[p].streams[i];
            if (!s->active)
                continue;
            shown++;
            json_obj_begin(j, NULL);
            json_u64(j, "stream", i);
            json_u64(j, "queue", p);
            json_u64(j, "packets", s->unique + s->dup + s->stale);
            json_u64(j, "unique", s->unique);
            json_u64(j, "lost", seq_lost(s));
            json_u64(j, "dup", s->dup);
            json_u64(j, "reorder", s->reorder);
            json_u64(j, "stale", s->stale);
            json_obj_end(j);
        }
    json_arr_end(j);
}

static void sink_result(const struct app_config *c, uint64_t ns, bool complete,
                        const struct qstats_rx *w, const struct stall *st)
{
    struct qstats_total t;
    qstats_sum(sink_state.q, sink_state.plan.npairs, &t);
    app_summary("sink", t.packets, t.bytes, ns);
    printf("sink: %llu streams, %llu lost, %llu dup, %llu reordered, %llu malformed\n",
           (unsigned long long)t.seq.streams, (unsigned long long)t.seq.lost,
           (unsigned long long)t.seq.dup, (unsigned long long)t.seq.reorder,
           (unsigned long long)qstats_rx_malformed(w));
    struct json *j = app_result_begin(c, t.packets, t.bytes, ns);
    app_wire_json(j, 0, 0, w->wire_rx, w->wire_rx_bytes);
    if (c->count) {
        json_u64(j, "count", c->count);
        json_bool(j, "complete", complete);
    }
    json_u64(j, "streams", t.seq.streams);
    json_u64(j, "unique", t.seq.unique);
    qstats_seq_json(j, &t.seq);
    json_u64(j, "no_header", t.no_header);
    json_u64(j, "bad_stream", t.bad_stream);
    json_u64(j, "not_ours", t.not_ours);
    json_u64(j, "malformed", qstats_rx_malformed(w));
    qstats_rx_kinds_json(j, w);
    qstats_json(j, sink_state.q, sink_state.plan.npairs, NULL, NULL);
    sink_streams_json(j);
    stall_json(j, st, time_tsc_hz);
    app_result_end(j);
}

/* The pairs over the CPUs, each pair's streams. */
static void sink_setup(const struct app_config *c)
{
    sink_state.dhcp = c->dhcp;
    sink_state.nif = net_if_get(0);
    percpu_plan("sink", net_if_dev(sink_state.nif), &sink_state.plan);
    sink_state.job = (struct percpu_job){.plan = &sink_state.plan,
                                         .dev = {net_if_dev(sink_state.nif)},
                                         .ndev = 1,
                                         .round = sink_poll,
                                         .done = sink_done,
                                         .count = c->count};
    percpu_job_ready(&sink_state.job);
    for (unsigned p = 0; p < sink_state.plan.npairs; p++)
        if (qstats_init(&sink_state.q[p], p, sink_state.plan.cpu_of[p], SINK_STREAMS) < 0)
            vn_fatal(VN_EXIT_OOM, "sink: no memory for %d streams", SINK_STREAMS);
}

/* A sample: rates, and with one CPU the loss so far (the APs' streams are
 * theirs until they are done). */
static void sink_sample(struct meter *m, uint64_t now, struct stall *st)
{
    uint64_t bytes, packets = qstats_packets_now(sink_state.q, sink_state.plan.npairs, &bytes);
    struct json *j = meter_sample(m, now, packets, bytes);
    if (sink_state.plan.ncpu == 1) {
        struct qstats_total t;
        qstats_sum(sink_state.q, sink_state.plan.npairs, &t);
        qstats_seq_json(j, &t.seq);
        json_u64(j, "malformed", qstats_rx_malformed(&sink_state.cpu[0].rx));
    }
    meter_end(m, st);
}

int app_sink_main(const struct app_config *c)
{
    apps_net_init(c, 1, 0);
    sink_setup(c);
    struct net_if *nif = sink_state.nif;
    struct meter m;
    meter_start(&m, c);
    uint64_t start = m.t0, now = start, packets = 0, bytes;
    uint64_t end = app_deadline(c, start, c->count ? SINK_TIMEOUT_S : SINK_DEFAULT_S);
    uint64_t count = c->count ? c->count : UINT64_MAX;
    uint64_t service_every = time_ns_to_cycles(500000u), next_service = start;
    printf("sink: waiting for frames%s, %u CPU%s receiving\n", c->count ? " (count=)" : "",
           sink_state.plan.ncpu, sink_state.plan.ncpu > 1 ? "s" : "");
    sink_state.job.end = end;
    percpu_start("sink", &sink_state.plan, sink_ap, NULL);

    /* Stalls from here: the console line above was the app's own time. */
    struct stall st;
    app_stall_start(&st);
    while (packets < count) {
        now = time_cycles();
        stall_round(&st, now);
        if (now >= end)
            break;
        int n = sink_poll(0, now);
        packets = qstats_packets_now(sink_state.q, sink_state.plan.npairs, &bytes);
        if (c->qreset_at && !sink_state.qreset_done && packets >= c->qreset_at) {
            apps_qreset(c, nif, 0, false);
            sink_state.qreset_done = true;
        }
        if (n < NET_RX_BATCH || now >= next_service) {
            net_service();
            next_service = now + service_every;
        }
        /* Empty rings: halt (notify=irq|hybrid) until a frame on CPU 0's
         * pairs, an AP's wake at count=, the next sample or the end. */
        if (n == 0)
            stall_skip(&st, net_idle(m.next < end ? m.next : end));
        if (meter_due(&m, now))
            sink_sample(&m, now, &st);
    }
    percpu_stop(&sink_state.plan, &sink_state.job.stop);
    percpu_wait(&sink_state.plan);
    struct qstats_rx w;
    sink_add_up(&w);
    packets = qstats_packets_now(sink_state.q, sink_state.plan.npairs, &bytes);
    bool complete = packets >= count;
    /* Rates over the traffic itself (first to last frame) when there was
     * any, so the wait for the sender does not dilute them. */
    uint64_t ns = w.first && w.last > w.first ? time_cycles_to_ns(w.last - w.first)
                                              : time_cycles_to_ns(now - start);
    sink_result(c, ns, complete, &w, &st);
    if (c->count && !complete) {
        printf("sink: %llu of count=%llu frames before the %llu s limit\n",
               (unsigned long long)packets, (unsigned long long)c->count,
               (unsigned long long)(c->duration_s ? c->duration_s : SINK_TIMEOUT_S));
        return VN_EXIT_TEST_FAILED;
    }
    return VN_EXIT_OK;
}
