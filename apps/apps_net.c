#include "apps/apps_net.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/apps_ctrl.h"
#include "kernel/exit.h"
#include "kernel/json.h"
#include "kernel/kernel.h"
#include "kernel/result.h"
#include "net/net.h"

_Static_assert(CFG_QUEUES_MAX == VNET_MAX_PAIRS, "queues= takes what the driver can drive");
_Static_assert(CFG_WINDOW_MAX == TCP_WND, "window= goes up to lwIP's window");
_Static_assert(CFG_WINDOW_MIN >= 0xffff, "window= covers what a handshake offered");

int apps_vnet_params(const struct app_config *c, struct vnet_params *p, char *why, size_t whylen)
{
    *p = (struct vnet_params){0}; /* offloads: the caller's to ask */
    p->ring_size = c->ring;
    p->kick_batch = c->kick_batch;
    p->rx_refill = c->rx_refill;
    p->rx_coalesce = c->rx_coalesce;
    p->rx_coalesce_us = c->rx_coalesce_us;
    p->queues = c->queues;
    p->txfull = c->txfull == CFG_TXFULL_DROP ? VNET_TXFULL_DROP : VNET_TXFULL_WAIT;
    p->vlan_filter = c->vlan != 0 || c->netif_vlan != 0;
    p->qinq = c->netif_svlan != 0;
    p->indirect = c->indirect == CFG_INDIRECT_ON    ? VNET_INDIRECT_ON
                  : c->indirect == CFG_INDIRECT_OFF ? VNET_INDIRECT_OFF
                                                    : VNET_INDIRECT_AUTO;
    char r[256] = "";
    if (vnet_features_parse(c->features, &p->features_off) < 0) {
        vnet_features_check(c->features, r, sizeof(r));
        snprintf(why, whylen, "features=%s: %s", c->features, r);
        return -EINVAL;
    }
    if (vnet_notify_parse(c->notify, &p->notify_rx, &p->notify_tx) < 0) {
        vnet_notify_check(c->notify, r, sizeof(r));
        snprintf(why, whylen, "notify=%s: %s", c->notify, r);
        return -EINVAL;
    }
    return 0;
}

void apps_net_init(const struct app_config *c, unsigned min_devs, unsigned offloads)
{
    char who[sizeof(c->app) + 4];
    snprintf(who, sizeof(who), "app=%s", c->app);
    struct net_setup s = {.min_devs = min_devs,
                          .who = who,
                          .cmdline = kboot.cmdline,
                          .seed = c->seed,
                          .dhcp = c->dhcp,
                          .ip = c->ip,
                          .mask = c->mask,
                          .gw = c->gw,
                          .ip6 = app_config_given(c, "ip6") ? c->ip6 : NULL,
                          .mac = app_config_given(c, "mac") ? c->mac : NULL,
                          .vlan_vid = c->netif_vlan,
                          .vlan_pcp = c->netif_pcp,
                          .svlan_vid = c->netif_svlan,
                          .device_error = apps_device_error};
    char why[320];
    if (apps_vnet_params(c, &s.vnet, why, sizeof(why)) < 0)
        vn_fatal(VN_EXIT_CONFIG, "config: %s", why);
    s.vnet.offloads = (uint8_t)offloads;
    net_init(&s);
    apps_ctrl_apply(c, net_if_get(0));
}

void apps_dst_mac(const struct app_config *c, uint8_t mac[6])
{
    net_dst_mac(c->dst_ip, app_config_given(c, "dst_mac") ? c->dst_mac : NULL, mac);
}

void apps_peer_addr(const struct app_config *c, ip_addr_t *dst)
{
    if (app_config_given(c, "dst_ip6")) {
        ip6_addr_t a;
        memcpy(a.addr, c->dst_ip6, sizeof(a.addr)); /* both network order */
        ip_addr_copy_from_ip6(*dst, a);
        return;
    }
    ip_addr_set_ip4_u32_val(*dst, c->dst_ip);
}

void apps_peer_mac(const struct app_config *c, uint8_t mac[6])
{
    if (app_config_given(c, "dst_ip6"))
        net_dst_mac6(c->dst_ip6, mac);
    else
        apps_dst_mac(c, mac);
}

void apps_qreset(const struct app_config *c, struct net_if *nif, unsigned pair, bool tx)
{
    struct vnet_dev *dev = net_if_dev(nif);
    int r = vnet_queue_reset(dev, pair, tx);
    if (r == -EOPNOTSUPP)
        vn_fatal(VN_EXIT_CONFIG,
                 "config: qreset_at=%llu: the device does not offer VIRTIO_F_RING_RESET (QEMU 7.2 "
                 "or later: virtio-net-pci,queue_reset=on; not legacy virtio, not "
                 "features=-ring_reset)",
                 (unsigned long long)c->qreset_at);
    if (r == -EBUSY)
        vn_fatal(VN_EXIT_DEVICE, "vnet: %s: TX queue reset: frames out did not come back in 200 ms",
                 vnet_name(dev));
    if (net_check(nif, r) < 0)
        vn_fatal(VN_EXIT_INTERNAL, "vnet: queue reset: error %d", r);
    printf("vnet: %s: pair %u %s queue reset and re-enabled\n", vnet_name(dev), pair,
           tx ? "tx" : "rx");
}

void apps_device_error(const struct vnet_dev *d)
{
    struct vnet_fault f = {"?", "broken", 0, 0, 0};
    vnet_fault(d, &f);
    char msg[160];
    snprintf(msg, sizeof(msg), "%s %s: %s (id %u len %u limit %u)", vnet_name(d), f.queue, f.what,
             f.id, f.len, f.limit);
    printf("vnet: %s\n", msg);
    struct json *j = result_begin("error");
    json_u64(j, "code", VN_EXIT_DEVICE);
    json_str(j, "reason", vn_exit_name(VN_EXIT_DEVICE));
    json_str(j, "message", msg);
    json_obj_begin(j, "vnet");
    vnet_stats_json(d, j);
    json_obj_end(j);
    result_end();
    vn_exit(VN_EXIT_DEVICE);
}

void apps_tx_ring_json(struct json *j, const struct vnet_dev *d, unsigned q)
{
    uint64_t full, halts;
    vnet_tx_full_counts(d, q, &full, &halts);
    json_u64(j, "ring_full", full);
    json_u64(j, "halts", halts);
}
