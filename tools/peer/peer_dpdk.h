/* vnperf-peer-dpdk's transport: DPDK net_vhost ports (vhost-user server
 * sockets QEMU connects to), frames copied into mbufs and handed to the
 * guest's RX ring by rte_eth_tx_burst, no system call per frame. */
#ifndef PEER_DPDK_H
#define PEER_DPDK_H

#include <stddef.h>

#include "tools/peer/peer_run.h"

/* Exit status when a guest's driver never came up within --link-wait. */
#define PEER_DPDK_EXIT_NO_LINK 3

struct peer_dpdk;

/* EAL (no hugepages, in memory, EAL's log on stderr), the mbuf pool and the
 * --tx-vhost / --rx-vhost ports, started: their sockets exist when it
 * returns. -errno with one line in err. */
int peer_dpdk_open(const struct peer_opts *o, struct peer_dpdk **out, char *err, size_t errlen);

/* Waits for every port's link (the guest's virtio driver ready), then with
 * --start-on-usr1 for the signal; -ETIMEDOUT after --link-wait, -EINTR on a
 * stop signal, with one line in err. */
int peer_dpdk_wait_up(struct peer_dpdk *d, const struct peer_opts *o, char *err, size_t errlen);

/* io's operations over d; rx (or NULL) is the run that counts --rx-vhost's
 * frames, polled whenever a run waits (a sender for its next frame). */
void peer_dpdk_io(struct peer_dpdk *d, struct peer_io *io, struct peer_run *rx);

/* Counts --rx-vhost's frames into the run peer_dpdk_io gave until it has
 * want of them or CLOCK_MONOTONIC until_ns (or a stop signal). */
void peer_dpdk_drain(struct peer_dpdk *d, uint64_t want, uint64_t until_ns);

/* Counts --rx-vhost's frames into rx (its io from peer_dpdk_io) until
 * peer_rx_done says stop. */
void peer_dpdk_count(struct peer_run *rx);

/* Stops the ports and EAL; d is freed. */
void peer_dpdk_close(struct peer_dpdk *d);

/* Set by the SIGUSR1 handler: the guest app is ready (--start-on-usr1). */
extern volatile sig_atomic_t peer_dpdk_go;

#endif
