/* VIRTIO_NET_F_GUEST_ANNOUNCE (virtio 1.2 s5.1.6.5.4): a device that moved
 * (a migrated guest) sets ANNOUNCE in its status and raises a config
 * change; every NET_ANNOUNCE_MS the main loop's service looks at each
 * device's status, the first device's stack tells its peers where it is
 * now (a gratuitous ARP) and the driver acknowledges, which clears the
 * bit. No lwIP timer: the apps' own (iperf's) fill lwIP's timer pool. */
#include "drivers/virtio/vnet_ctrl_cmds.h"
#include "kernel/time.h"
#include "lwip/etharp.h"
#include "net/net_priv.h"

#define NET_ANNOUNCE_MS 200

static uint64_t net_announce_next;

void net_announce_service(void)
{
    uint64_t now = time_cycles();
    if (now < net_announce_next)
        return;
    net_announce_next = now + time_ns_to_cycles(NET_ANNOUNCE_MS * 1000000ull);
    for (unsigned i = 0; i < net_if_count(); i++) {
        struct net_if *nif = net_if_get(i);
        /* an ack that failed is counted in vnet.ctrl (err, timeouts) */
        if (vnet_announce_poll(net_if_dev(nif)) == 1 && nif->has_netif)
            etharp_gratuitous(&nif->netif);
    }
}
