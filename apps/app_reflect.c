/* app=reflect: sends every UDP frame back where it came from (testpmd
 * macswap plus IP address and UDP port swap), batched and without a copy:
 * the received buffer itself is queued for TX and released to the RX ring
 * in tx_done. Malformed frames are counted and dropped; ARP, ICMP and TCP
 * go to lwIP. Runs for duration= (default REFLECT_DEFAULT_S) or until
 * count= frames were reflected. */
#include <stdio.h>

#include "apps/app_config.h"
#include "apps/app_list.h"
#include "apps/apps_common.h"
#include "apps/apps_net.h"
#include "apps/relay.h"
#include "kernel/exit.h"
#include "kernel/result.h"
#include "kernel/time.h"
#include "net/net.h"
#include "net/pkt.h"

#define REFLECT_DEFAULT_S 10
#define DHCP_CLIENT_PORT  68

static struct reflect {
    uint64_t packets, bytes, tx_dropped;
    uint64_t wire_rx, wire_rx_bytes; /* every frame received */
    uint64_t kinds[PKT_KINDS];
    bool dhcp;                /* dhcp=: frames to the DHCP client port are lwIP's */
    const struct net_if *nif; /* whose MAC the reflected frames leave from */
} reflect_state;

static uint64_t malformed(void)
{
    return reflect_state.kinds[PKT_BAD_LEN] + reflect_state.kinds[PKT_BAD_HDR] +
           reflect_state.kinds[PKT_BAD_CSUM];
}

/* UDP frames are swapped in place and sent back; malformed ones dropped;
 * the rest (ARP, ICMP, TCP, DHCP answers) go to lwIP. */
static enum relay_verdict reflect_judge(void *ctx, const struct vnet_rx *rx)
{
    (void)ctx;
    struct pkt_info pi;
    uint8_t *f = rx->frame;
    enum pkt_kind k = pkt_parse(f, rx->len, true, &pi);
    reflect_state.kinds[k]++;
    reflect_state.wire_rx++;
    reflect_state.wire_rx_bytes += rx->len;
    if (k == PKT_UDP && !(reflect_state.dhcp && pi.dport == DHCP_CLIENT_PORT)) {
        pkt_udp_reflect(f, &pi, net_if_mac(reflect_state.nif));
        return RELAY_SEND;
    }
    if (k == PKT_BAD_LEN || k == PKT_BAD_HDR || k == PKT_BAD_CSUM)
        return RELAY_DROP;
    return RELAY_LWIP;
}

int app_reflect_main(const struct app_config *c)
{
    apps_net_init(c, 1, 0);
    struct net_if *nif = net_if_get(0);
    reflect_state.nif = nif;
    reflect_state.dhcp = c->dhcp;
    struct meter m;
    meter_start(&m, c);
    uint64_t start = m.t0, now = start, first = 0, last = 0;
    uint64_t end = app_deadline(c, start, REFLECT_DEFAULT_S);
    uint64_t count = c->count ? c->count : UINT64_MAX;
    uint64_t service_every = time_ns_to_cycles(500000u), next_service = start;
    printf("reflect: swapping MAC, IP and UDP ports of every UDP frame\n");

    while (reflect_state.packets < count) {
        now = time_cycles();
        if (now >= end)
            break;
        struct relay_burst b;
        relay_burst(nif, nif, reflect_judge, NULL, &b);
        if (b.queued) {
            reflect_state.bytes += b.bytes;
            reflect_state.packets += (uint64_t)b.sent;
            reflect_state.tx_dropped += (uint64_t)(b.queued - b.sent);
            if (!first)
                first = now;
            last = now;
        }
        net_check(nif, vnet_tx_reclaim(net_if_dev(nif)));
        if (b.received < NET_RX_BATCH || now >= next_service) {
            net_service();
            next_service = now + service_every;
        }
        if (meter_due(&m, now)) {
            struct json *j = meter_sample(&m, now, reflect_state.packets, reflect_state.bytes);
            json_u64(j, "tx_dropped", reflect_state.tx_dropped);
            json_u64(j, "malformed", malformed());
            result_end();
        }
    }
    /* Let the last reflected frames leave before the result. */
    uint64_t drain_end = time_cycles() + time_ns_to_cycles(100000000ull);
    while (time_cycles() < drain_end)
        net_service();
    uint64_t ns =
        first && last > first ? time_cycles_to_ns(last - first) : time_cycles_to_ns(now - start);
    app_summary("reflect", reflect_state.packets, reflect_state.bytes, ns);
    struct json *j = app_result_begin(c, reflect_state.packets, reflect_state.bytes, ns);
    app_wire_json(j, reflect_state.packets, reflect_state.bytes, reflect_state.wire_rx,
                  reflect_state.wire_rx_bytes);
    json_u64(j, "tx_dropped", reflect_state.tx_dropped);
    json_u64(j, "malformed", malformed());
    json_obj_begin(j, "rx_kinds");
    for (int k = 0; k < PKT_KINDS; k++)
        json_u64(j, pkt_kind_name((enum pkt_kind)k), reflect_state.kinds[k]);
    json_obj_end(j);
    app_result_end(j);
    return VN_EXIT_OK;
}
