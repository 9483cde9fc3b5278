/* VIRTIO_NET_F_GUEST_ANNOUNCE (virtio 1.2 s5.1.6.5.4): a device that moved
 * (a migrated guest) sets ANNOUNCE in its status and raises a config
 * change; every NET_ANNOUNCE_MS an lwIP timer looks at each device's
 * status, the first device's stack tells its peers where it is now (a
 * gratuitous ARP) and the driver acknowledges, which clears the bit. */
#include "drivers/virtio/vnet_ctrl_cmds.h"
#include "lwip/etharp.h"
#include "lwip/timeouts.h"
#include "net/net_priv.h"

#define NET_ANNOUNCE_MS 200

static void net_announce_tick(void *arg)
{
    (void)arg;
    for (unsigned i = 0; i < net_if_count(); i++) {
        struct net_if *nif = net_if_get(i);
        int r = vnet_announce_poll(net_if_dev(nif));
        /* an ack that failed is counted in vnet.ctrl (err, timeouts) */
        if (r == 1 && nif->has_netif)
            etharp_gratuitous(&nif->netif);
    }
    sys_timeout(NET_ANNOUNCE_MS, net_announce_tick, NULL);
}

void net_announce_init(void)
{
    sys_timeout(NET_ANNOUNCE_MS, net_announce_tick, NULL);
}
