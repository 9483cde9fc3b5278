/* app=sink: counts UDP frames per stream on the raw path; loss,
 * duplicates and reordering from the payload's sequence numbers.
 * count=N: exits 0 as soon as N frames arrived, with "test failed" when
 * duration= (default SINK_TIMEOUT_S) passes first. Without count= it runs
 * for duration= (default SINK_DEFAULT_S). Malformed frames are counted
 * by kind and dropped; ARP, ICMP and TCP go to lwIP. */
#include <stdio.h>
#include <stdlib.h>

#include "apps/app_config.h"
#include "apps/app_list.h"
#include "apps/apps_common.h"
#include "apps/apps_net.h"
#include "apps/seqtrack.h"
#include "apps/stall.h"
#include "kernel/exit.h"
#include "kernel/result.h"
#include "kernel/time.h"
#include "net/net.h"
#include "net/pkt.h"

#define SINK_STREAMS     1024
#define SINK_DEFAULT_S   10
#define SINK_TIMEOUT_S   30
#define DHCP_CLIENT_PORT 68

static struct sink {
    struct seq_stream *streams;
    uint64_t packets, bytes, no_header, bad_stream;
    uint64_t wire_rx, wire_rx_bytes; /* every frame received */
    uint64_t kinds[PKT_KINDS];
    bool dhcp;        /* dhcp=: frames to the DHCP client port are lwIP's */
    bool qreset_done; /* qreset_at= */
} sink_state;

static inline void sink_frame(struct net_if *nif, const struct vnet_rx *rx)
{
    struct pkt_info pi;
    const uint8_t *f = rx->frame;
    enum pkt_kind k = pkt_parse(f, rx->len, true, &pi);
    sink_state.kinds[k]++;
    sink_state.wire_rx++;
    sink_state.wire_rx_bytes += rx->len;
    switch (k) {
    case PKT_UDP:
        if (sink_state.dhcp && pi.dport == DHCP_CLIENT_PORT)
            break;
        sink_state.packets++;
        sink_state.bytes += rx->len;
        uint32_t id;
        uint64_t seq;
        if (!pkt_payload_hdr(f, &pi, &id, &seq))
            sink_state.no_header++;
        else if (id < SINK_STREAMS)
            seq_record(&sink_state.streams[id], seq);
        else
            sink_state.bad_stream++;
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
    net_input(nif, rx);
}

static uint64_t malformed(void)
{
    return sink_state.kinds[PKT_BAD_LEN] + sink_state.kinds[PKT_BAD_HDR] +
           sink_state.kinds[PKT_BAD_CSUM];
}

static void sink_result(const struct app_config *c, uint64_t ns, bool complete,
                        const struct stall *st)
{
    struct seq_totals t;
    seq_sum(sink_state.streams, SINK_STREAMS, &t);
    app_summary("sink", sink_state.packets, sink_state.bytes, ns);
    printf("sink: %llu streams, %llu lost, %llu dup, %llu reordered, %llu malformed\n",
           (unsigned long long)t.streams, (unsigned long long)t.lost, (unsigned long long)t.dup,
           (unsigned long long)t.reorder, (unsigned long long)malformed());
    struct json *j = app_result_begin(c, sink_state.packets, sink_state.bytes, ns);
    app_wire_json(j, 0, 0, sink_state.wire_rx, sink_state.wire_rx_bytes);
    if (c->count) {
        json_u64(j, "count", c->count);
        json_bool(j, "complete", complete);
    }
    json_u64(j, "streams", t.streams);
    json_u64(j, "unique", t.unique);
    json_u64(j, "lost", t.lost);
    json_u64(j, "dup", t.dup);
    json_u64(j, "reorder", t.reorder);
    json_u64(j, "stale", t.stale);
    json_u64(j, "no_header", sink_state.no_header);
    json_u64(j, "bad_stream", sink_state.bad_stream);
    json_u64(j, "malformed", malformed());
    json_obj_begin(j, "rx_kinds");
    for (int k = 0; k < PKT_KINDS; k++)
        json_u64(j, pkt_kind_name((enum pkt_kind)k), sink_state.kinds[k]);
    json_obj_end(j);
    json_arr_begin(j, "per_stream");
    unsigned shown = 0;
    for (unsigned i = 0; i < SINK_STREAMS && shown < 16; i++) {
        if (!sink_state.streams[i].active)
            continue;
        shown++;
        json_obj_begin(j, NULL);
        json_u64(j, "stream", i);
        json_u64(j, "unique", sink_state.streams[i].unique);
        json_u64(j, "lost", seq_lost(&sink_state.streams[i]));
        json_u64(j, "dup", sink_state.streams[i].dup);
        json_u64(j, "reorder", sink_state.streams[i].reorder);
        json_u64(j, "stale", sink_state.streams[i].stale);
        json_obj_end(j);
    }
    json_arr_end(j);
    stall_json(j, st, time_tsc_hz);
    app_result_end(j);
}

int app_sink_main(const struct app_config *c)
{
    sink_state.dhcp = c->dhcp;
    sink_state.streams = calloc(SINK_STREAMS, sizeof(*sink_state.streams));
    if (!sink_state.streams)
        vn_fatal(VN_EXIT_OOM, "sink: no memory for %d streams", SINK_STREAMS);
    apps_net_init(c, 1, 0);
    struct net_if *nif = net_if_get(0);
    struct vnet_rx rx[NET_RX_BATCH];
    struct meter m;
    meter_start(&m, c);
    uint64_t start = m.t0, now = start, first = 0, last = 0;
    uint64_t end = app_deadline(c, start, c->count ? SINK_TIMEOUT_S : SINK_DEFAULT_S);
    uint64_t count = c->count ? c->count : UINT64_MAX;
    uint64_t service_every = time_ns_to_cycles(500000u), next_service = start;
    printf("sink: waiting for frames%s\n", c->count ? " (count=)" : "");

    /* Stalls from here: the console line above was the app's own time. */
    struct stall st;
    app_stall_start(&st);
    while (sink_state.packets < count) {
        now = time_cycles();
        stall_round(&st, now);
        if (now >= end)
            break;
        int n = net_check(nif, vnet_rx_burst(net_if_dev(nif), rx, NET_RX_BATCH));
        if (n > 0) {
            uint64_t before = sink_state.packets;
            for (int i = 0; i < n; i++)
                sink_frame(nif, &rx[i]);
            if (sink_state.packets != before) {
                if (!first)
                    first = now;
                last = now;
            }
            if (c->qreset_at && !sink_state.qreset_done && sink_state.packets >= c->qreset_at) {
                apps_qreset(c, nif, 0, false);
                sink_state.qreset_done = true;
            }
        }
        if (n < NET_RX_BATCH || now >= next_service) {
            net_service();
            next_service = now + service_every;
        }
        /* An empty ring: halt (notify=irq|hybrid) until a frame, the next
         * sample or the end. */
        if (n == 0)
            stall_skip(&st, net_idle(m.next < end ? m.next : end));
        if (meter_due(&m, now)) {
            struct seq_totals t;
            seq_sum(sink_state.streams, SINK_STREAMS, &t);
            struct json *j = meter_sample(&m, now, sink_state.packets, sink_state.bytes);
            json_u64(j, "lost", t.lost);
            json_u64(j, "dup", t.dup);
            json_u64(j, "reorder", t.reorder);
            json_u64(j, "stale", t.stale);
            json_u64(j, "malformed", malformed());
            meter_end(&m, &st);
        }
    }
    bool complete = sink_state.packets >= count;
    /* Rates over the traffic itself (first to last frame) when there was
     * any, so the wait for the sender does not dilute them. */
    uint64_t ns =
        first && last > first ? time_cycles_to_ns(last - first) : time_cycles_to_ns(now - start);
    sink_result(c, ns, complete, &st);
    if (c->count && !complete) {
        printf("sink: %llu of count=%llu frames before the %llu s limit\n",
               (unsigned long long)sink_state.packets, (unsigned long long)c->count,
               (unsigned long long)(c->duration_s ? c->duration_s : SINK_TIMEOUT_S));
        return VN_EXIT_TEST_FAILED;
    }
    return VN_EXIT_OK;
}
