/* The appliance's side of the network: what the config line asks of the
 * driver, the bring-up, and the exit when a device breaks a rule. */
#ifndef VN_APPS_NET_H
#define VN_APPS_NET_H

#include "drivers/virtio/vnet.h"
#include "apps/app_config.h"

/* The driver parameters the config line asks for (ring=, kick_batch=,
 * rx_refill=, txfull=, features=, notify=). 0, or -EINVAL with why
 * (the key, its value and what is wrong). */
int apps_vnet_params(const struct app_config *c, struct vnet_params *p, char *why, size_t whylen);

/* net_init with those parameters, c's addressing (ip=, mask=, gw=,
 * dhcp=, mac=) and seed=, the offloads (VNET_OFF_*) the app's traffic may
 * use, the kernel command line (the drivers read the virtio_mmio.device=
 * words on it) and apps_device_error. */
void apps_net_init(const struct app_config *c, unsigned min_devs, unsigned offloads);

/* net_dst_mac for dst_ip=, with dst_mac= where the line gives it. */
void apps_dst_mac(const struct app_config *c, uint8_t mac[6]);

/* The lwIP apps' peer (rr, iperf): dst_ip6= where the line gives it,
 * else dst_ip=, into dst; and its MAC resolved (apps_dst_mac, or
 * neighbour discovery for dst_ip6=), a clear end when it does not
 * answer. */
struct ip_addr;
void apps_peer_addr(const struct app_config *c, struct ip_addr *dst);
void apps_peer_mac(const struct app_config *c, uint8_t mac[6]);

/* qreset_at=: resets pair's TX (tx) or RX queue (vnet_queue_reset) and
 * says so on the console. A device without VIRTIO_F_RING_RESET is the
 * config error's one line; one that fails the reset, apps_device_error. */
struct net_if;
void apps_qreset(const struct app_config *c, struct net_if *nif, unsigned pair, bool tx);

/* Pair q's TX ring in a result's "queues" entry: "ring_full" (found
 * full) and "halts" (waits that halted), the members every app with
 * per-pair rows writes. q < vnet_pairs(). */
struct json;
void apps_tx_ring_json(struct json *j, const struct vnet_dev *d, unsigned q);

/* A device broke a rule: one line and an "error" result with the
 * driver's counters and the violation, then VN_EXIT_DEVICE. */
void apps_device_error(const struct vnet_dev *d) __attribute__((noreturn));

#endif
