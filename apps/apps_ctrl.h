/* The control queue commands a config line asks for at start (promisc=,
 * allmulti=, mac_set=, vlan=, coal_tx_frames= and the other coal_*=;
 * docs/config.md), each reply checked. */
#ifndef VN_APPS_CTRL_H
#define VN_APPS_CTRL_H

#include "apps/app_config.h"

struct net_if;

/* Sends each command the line gave, on the first device. A feature the
 * device did not negotiate: one config-error line (status 2); VIRTIO_NET_ERR
 * or no reply: one device-error line (status 4). */
void apps_ctrl_apply(const struct app_config *c, struct net_if *nif);

#endif
