/* promisc=, allmulti=, mac_set=, vlan=, netif_vlan=, coal_*= (see apps_ctrl.h). */
#include "apps/apps_ctrl.h"

#include <errno.h>
#include <stdio.h>

#include "drivers/virtio/vnet_coal.h"
#include "drivers/virtio/vnet_ctrl_cmds.h"
#include "kernel/exit.h"
#include "net/net.h"

/* One command's outcome: a line and an exit unless it was OK. */
static void apps_ctrl_check(struct net_if *nif, const char *what, const char *feature, int r)
{
    struct vnet_dev *dev = net_if_dev(nif);
    if (r == -EOPNOTSUPP)
        vn_fatal(VN_EXIT_CONFIG, "config: %s: the device does not offer %s (or features= took it)",
                 what, feature);
    if (r == -EIO || r == -ETIMEDOUT || r == -EPROTO)
        vn_fatal(VN_EXIT_DEVICE, "vnet: %s: %s: the device answered %s", vnet_name(dev), what,
                 r == -EIO         ? "VIRTIO_NET_ERR"
                 : r == -ETIMEDOUT ? "nothing"
                                   : "a malformed reply");
    if (r < 0)
        vn_fatal(VN_EXIT_INTERNAL, "vnet: %s: error %d", what, r);
    printf("vnet: %s: %s: OK\n", vnet_name(dev), what);
}

/* VQ_GET on each of the direction's queues in use, where VQ_NOTF_COAL is
 * negotiated: what the device says it applied, on the console. */
static void apps_coal_readback(struct net_if *nif, bool tx)
{
    struct vnet_dev *dev = net_if_dev(nif);
    for (unsigned p = 0; p < vnet_pairs(dev); p++) {
        struct vnet_coal got;
        unsigned vq = 2u * p + tx; /* virtio 1.2 s5.1.2 */
        int r = vnet_coal_vq_get(dev, vq, &got);
        if (r == -EOPNOTSUPP)
            return;
        if (r < 0)
            apps_ctrl_check(nif, "coal VQ_GET", "VIRTIO_NET_F_VQ_NOTF_COAL", r);
        printf("vnet: %s: vq %u: max_packets %lu, max_usecs %lu\n", vnet_name(dev), vq,
               (unsigned long)got.max_packets, (unsigned long)got.max_usecs);
    }
}

/* coal_tx_*= or coal_rx_*= (either key given): the pair of values for
 * every queue of the direction, then read back. */
static void apps_coal(const struct app_config *c, struct net_if *nif, bool tx)
{
    const char *dir = tx ? "tx" : "rx";
    char frames[16], usecs[16], what[64];
    snprintf(frames, sizeof(frames), "coal_%s_frames", dir);
    snprintf(usecs, sizeof(usecs), "coal_%s_usecs", dir);
    if (!app_config_given(c, frames) && !app_config_given(c, usecs))
        return;
    struct vnet_coal k = {tx ? c->coal_tx_frames : c->coal_rx_frames,
                          tx ? c->coal_tx_usecs : c->coal_rx_usecs};
    snprintf(what, sizeof(what), "%s=%lu %s=%lu", frames, (unsigned long)k.max_packets, usecs,
             (unsigned long)k.max_usecs);
    apps_ctrl_check(nif, what, "VIRTIO_NET_F_NOTF_COAL or VIRTIO_NET_F_VQ_NOTF_COAL",
                    vnet_coal_set(net_if_dev(nif), tx, &k));
    apps_coal_readback(nif, tx);
}

void apps_ctrl_apply(const struct app_config *c, struct net_if *nif)
{
    struct vnet_dev *dev = net_if_dev(nif);
    char what[48];
    if (app_config_given(c, "promisc")) {
        snprintf(what, sizeof(what), "promisc=%u", (unsigned)c->promisc);
        apps_ctrl_check(nif, what, "VIRTIO_NET_F_CTRL_RX", vnet_ctrl_promisc(dev, c->promisc));
    }
    if (app_config_given(c, "allmulti")) {
        snprintf(what, sizeof(what), "allmulti=%u", (unsigned)c->allmulti);
        apps_ctrl_check(nif, what, "VIRTIO_NET_F_CTRL_RX", vnet_ctrl_allmulti(dev, c->allmulti));
    }
    if (c->mac_set) {
        /* s5.1.6.5.2: the address, and a unicast table of it (frames to
         * it pass the filter with promiscuous mode off) */
        const uint8_t *m = net_if_mac(nif);
        apps_ctrl_check(nif, "mac_set=1", "VIRTIO_NET_F_CTRL_MAC_ADDR", vnet_ctrl_mac_addr(dev, m));
        apps_ctrl_check(nif, "mac_set=1 (MAC_TABLE_SET)", "VIRTIO_NET_F_CTRL_RX",
                        vnet_ctrl_mac_table(dev, (const uint8_t(*)[6])m, 1, NULL, 0));
    }
    if (c->vlan) {
        snprintf(what, sizeof(what), "vlan=%u", (unsigned)c->vlan);
        apps_ctrl_check(nif, what, "VIRTIO_NET_F_CTRL_VLAN", vnet_ctrl_vlan(dev, c->vlan, true));
    }
    /* The device's filter, where it has one, passes lwIP's VLAN; without
     * CTRL_VLAN every tag passes (lwIP's hook then filters). */
    int r = c->netif_vlan ? vnet_ctrl_vlan(dev, c->netif_vlan, true) : -EOPNOTSUPP;
    if (r != -EOPNOTSUPP) {
        snprintf(what, sizeof(what), "netif_vlan=%u", (unsigned)c->netif_vlan);
        apps_ctrl_check(nif, what, "VIRTIO_NET_F_CTRL_VLAN", r);
    }
    apps_coal(c, nif, true);
    apps_coal(c, nif, false);
}
