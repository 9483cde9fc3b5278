/* DPDK net_vhost ports for the peer (docs/peer.md, "vnperf-peer-dpdk"). */
#define _GNU_SOURCE
#include "tools/peer/peer_dpdk.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>

/* Mbufs: a burst in flight each way; vhost frees a sent one after its copy. */
#define DPDK_MBUFS      2047
#define DPDK_MBUF_CACHE 64
#define DPDK_RING_DESC  512
/* Without hugepages EAL maps this much plain memory for the pool. */
#define DPDK_MEM_MB "128"
/* Sleep between empty polls of --rx-vhost: the CPUs are shared with the
 * guests, so the peer never spins. */
#define DPDK_POLL_NAP_NS  20000ull
#define DPDK_LINK_POLL_NS 10000000ull
#define DPDK_PORTS        2
#define DPDK_RX_SLOT      (PEER_SIZE_MAX + 1)

_Static_assert(PEER_BATCH_MAX <= UINT16_MAX, "rte_eth_*_burst counts in uint16_t");
_Static_assert(PKT_MAX_FRAME + RTE_PKTMBUF_HEADROOM <= UINT16_MAX, "mbuf data room is uint16_t");

volatile sig_atomic_t peer_dpdk_go;

struct dpdk_port {
    const char *sock;
    uint16_t id;
};

struct peer_dpdk {
    struct rte_mempool *pool;
    struct dpdk_port ports[DPDK_PORTS];
    unsigned nports;
    int tx, rx;           /* index into ports, -1 when not given */
    struct peer_run *rxr; /* counts the rx port, NULL without one */
    uint32_t batch;
    bool verify_csum;
    struct rte_mbuf *burst[PEER_BATCH_MAX];
    uint8_t linear[DPDK_RX_SLOT]; /* a chained mbuf's frame, made contiguous */
};

static int fail(char *err, size_t errlen, int rc, const char *what, const char *why)
{
    snprintf(err, errlen, "%s: %s", what, why);
    return rc;
}

/* The ports in order: --tx-vhost (net_vhost0), then --rx-vhost. */
static void ports_from_opts(struct peer_dpdk *d, const struct peer_opts *o)
{
    d->tx = d->rx = -1;
    if (o->tx_vhost) {
        d->tx = (int)d->nports;
        d->ports[d->nports++].sock = o->tx_vhost;
    }
    if (o->rx_vhost) {
        d->rx = (int)d->nports;
        d->ports[d->nports++].sock = o->rx_vhost;
    }
}

/* EAL pins its main thread to one CPU; the peer goes back to the CPUs it
 * was given, like the socket peer, so it never fights a vCPU for one. */
static int eal_init(const struct peer_dpdk *d, char *err, size_t errlen)
{
    char prefix[64], vdev[DPDK_PORTS][PEER_VHOST_PATH_MAX + 48];
    char *argv[16] = {"vnperf-peer-dpdk",
                      "--no-huge",
                      "-m",
                      DPDK_MEM_MB,
                      "--no-pci",
                      "--no-shconf",
                      "--no-telemetry",
                      "-l",
                      "0",
                      "--log-level=*:warning",
                      "--file-prefix",
                      prefix};
    int argc = 12;
    cpu_set_t cpus;

    snprintf(prefix, sizeof(prefix), "vnperf-peer-%d", (int)getpid());
    for (unsigned i = 0; i < d->nports; i++) {
        snprintf(vdev[i], sizeof(vdev[i]), "net_vhost%u,iface=%s,queues=1", i, d->ports[i].sock);
        argv[argc++] = "--vdev";
        argv[argc++] = vdev[i];
    }
    if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0)
        return fail(err, errlen, -errno, "sched_getaffinity", strerror(errno));
    /* EAL logs on stdout by default: the result line must be alone there */
    rte_openlog_stream(stderr);
    if (rte_eal_init(argc, argv) < 0)
        return fail(err, errlen, -rte_errno, "EAL init", rte_strerror(rte_errno));
    if (pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus) != 0)
        return fail(err, errlen, -EINVAL, "pthread_setaffinity_np", "failed");
    return 0;
}

/* One queue each way (vhost's queues=1); the socket appears here. */
static int port_start(struct peer_dpdk *d, unsigned i, char *err, size_t errlen)
{
    struct rte_eth_conf conf;
    char name[32];
    uint16_t id;
    int rc;

    memset(&conf, 0, sizeof(conf));
    snprintf(name, sizeof(name), "net_vhost%u", i);
    rc = rte_eth_dev_get_port_by_name(name, &id);
    if (rc == 0)
        rc = rte_eth_dev_configure(id, 1, 1, &conf);
    if (rc == 0)
        rc = rte_eth_rx_queue_setup(id, 0, DPDK_RING_DESC, SOCKET_ID_ANY, NULL, d->pool);
    if (rc == 0)
        rc = rte_eth_tx_queue_setup(id, 0, DPDK_RING_DESC, SOCKET_ID_ANY, NULL);
    if (rc == 0)
        rc = rte_eth_dev_start(id);
    if (rc != 0)
        return fail(err, errlen, rc < 0 ? rc : -EIO, d->ports[i].sock,
                    rte_strerror(rc < 0 ? -rc : EIO));
    d->ports[i].id = id;
    return 0;
}

int peer_dpdk_open(const struct peer_opts *o, struct peer_dpdk **out, char *err, size_t errlen)
{
    /* the frame must fit one mbuf: the send path copies it in whole */
    uint16_t room = (uint16_t)(RTE_PKTMBUF_HEADROOM + o->size);
    struct peer_dpdk *d = calloc(1, sizeof(*d));
    int rc;

    if (!d)
        return fail(err, errlen, -ENOMEM, "vnperf-peer-dpdk", "out of memory");
    ports_from_opts(d, o);
    d->batch = o->batch;
    d->verify_csum = o->verify_csum;
    rc = eal_init(d, err, errlen);
    if (rc == 0) {
        if (room < RTE_MBUF_DEFAULT_BUF_SIZE)
            room = RTE_MBUF_DEFAULT_BUF_SIZE;
        d->pool =
            rte_pktmbuf_pool_create("peer", DPDK_MBUFS, DPDK_MBUF_CACHE, 0, room, SOCKET_ID_ANY);
        if (!d->pool)
            rc = fail(err, errlen, -rte_errno, "mbuf pool", rte_strerror(rte_errno));
    }
    for (unsigned i = 0; rc == 0 && i < d->nports; i++)
        rc = port_start(d, i, err, errlen);
    if (rc < 0) {
        free(d);
        return rc;
    }
    *out = d;
    return 0;
}

static bool link_up(const struct peer_dpdk *d)
{
    for (unsigned i = 0; i < d->nports; i++) {
        struct rte_eth_link l;

        if (rte_eth_link_get_nowait(d->ports[i].id, &l) != 0 || l.link_status != RTE_ETH_LINK_UP)
            return false;
    }
    return true;
}

int peer_dpdk_wait_up(struct peer_dpdk *d, const struct peer_opts *o, char *err, size_t errlen)
{
    uint64_t end = peer_now_ns(CLOCK_MONOTONIC) + o->link_wait_ns;
    bool up = false;

    while (!peer_stop && peer_now_ns(CLOCK_MONOTONIC) < end) {
        up = up || link_up(d);
        if (up && (!o->start_on_usr1 || peer_dpdk_go))
            return 0;
        peer_sleep_until(NULL, peer_now_ns(CLOCK_MONOTONIC) + DPDK_LINK_POLL_NS);
    }
    if (peer_stop)
        return fail(err, errlen, -EINTR, "stopped", "before the guest was up");
    snprintf(err, errlen, "%s within %.1f s (%s)",
             up ? "no SIGUSR1 (--start-on-usr1)" : "no guest driver came up on the vhost ports",
             (double)o->link_wait_ns / NS_PER_SEC,
             up ? "the guest app was not ready"
                : "QEMU never connected or its virtio-net driver never set DRIVER_OK");
    return -ETIMEDOUT;
}

/* One burst from the rx port into rxr's counters; how many frames. */
static uint16_t rx_poll(struct peer_dpdk *d)
{
    struct peer_run *r = d->rxr;
    uint16_t n = rte_eth_rx_burst(d->ports[d->rx].id, 0, d->burst, (uint16_t)d->batch);

    if (n == 0)
        return 0;
    peer_rx_batch_start(r, peer_now_ns(CLOCK_MONOTONIC));
    for (uint16_t i = 0; i < n; i++) {
        struct rte_mbuf *m = d->burst[i];
        uint32_t len = rte_pktmbuf_pkt_len(m);
        const uint8_t *f = len < DPDK_RX_SLOT ? rte_pktmbuf_read(m, 0, len, d->linear) : NULL;

        if (f)
            peer_stats_rx(r->st, f, len, d->verify_csum);
        else
            peer_stats_error(r->st, &r->st->rx_errors, EMSGSIZE);
        r->st->packets += !f;
    }
    rte_pktmbuf_free_bulk(d->burst, n);
    return n;
}

/* The frames of msgs copied into mbufs; what the guest's RX ring has no
 * room for now is dropped and counted (a zero-loss search wants to know),
 * never retried: retrying would push the loss into a later burst. */
static int dpdk_send(struct peer_run *r, struct mmsghdr *msgs, uint32_t n)
{
    struct peer_dpdk *d = r->io->ctx;
    uint16_t sent;

    if (rte_pktmbuf_alloc_bulk(d->pool, d->burst, n) != 0)
        return -ENOBUFS;
    for (uint32_t i = 0; i < n; i++) {
        const struct iovec *v = msgs[i].msg_hdr.msg_iov;
        char *p = rte_pktmbuf_append(d->burst[i], (uint16_t)v->iov_len);

        /* the pool's data room holds --size (peer_dpdk_open) */
        if (!p) {
            rte_pktmbuf_free_bulk(d->burst, n);
            return -EMSGSIZE;
        }
        memcpy(p, v->iov_base, v->iov_len);
    }
    sent = rte_eth_tx_burst(d->ports[d->tx].id, 0, d->burst, (uint16_t)n);
    if (sent < n)
        rte_pktmbuf_free_bulk(d->burst + sent, n - sent);
    r->st->ring_full += n - sent;
    /* Take the forwarder's output back after every burst, not only while
     * ahead of schedule: catching up after a stall, the frames parked on
     * its output ring are the buffers its input ring needs (a zero-copy
     * forwarder has one set for both), and the peer's own delay would be
     * counted as the device's loss. */
    if (d->rxr)
        rx_poll(d);
    return (int)n;
}

/* The pacing wait: counts the rx port meanwhile, napping when it is empty. */
static void dpdk_wait(struct peer_run *r, uint64_t at_ns)
{
    struct peer_dpdk *d = r->io->ctx;

    if (!d->rxr) {
        peer_sleep_until(r, at_ns);
        return;
    }
    while (!peer_stop) {
        uint64_t now = peer_now_ns(CLOCK_MONOTONIC);

        if (now >= at_ns)
            return;
        if (rx_poll(d) == 0)
            peer_sleep_until(r, at_ns - now < DPDK_POLL_NAP_NS ? at_ns : now + DPDK_POLL_NAP_NS);
    }
}

void peer_dpdk_drain(struct peer_dpdk *d, uint64_t want, uint64_t until_ns)
{
    while (!peer_stop && d->rxr->st->packets < want) {
        uint64_t now = peer_now_ns(CLOCK_MONOTONIC);

        if (now >= until_ns)
            return;
        if (rx_poll(d) == 0)
            peer_sleep_until(d->rxr, now + DPDK_POLL_NAP_NS);
    }
}

void peer_dpdk_io(struct peer_dpdk *d, struct peer_io *io, struct peer_run *rx)
{
    d->rxr = rx;
    io->send = dpdk_send;
    io->wait = dpdk_wait;
    io->ctx = d;
}

void peer_dpdk_count(struct peer_run *rx)
{
    for (;;) {
        uint64_t now = peer_now_ns(CLOCK_MONOTONIC);

        rx->stop = peer_rx_done(rx, now);
        if (rx->stop)
            break;
        peer_progress(rx, now);
        rx->io->wait(rx, now + DPDK_LINK_POLL_NS);
    }
    rx->end_ns = peer_now_ns(CLOCK_MONOTONIC);
}

void peer_dpdk_close(struct peer_dpdk *d)
{
    char dir[PATH_MAX];

    for (unsigned i = 0; i < d->nports; i++) {
        rte_eth_dev_stop(d->ports[i].id);
        rte_eth_dev_close(d->ports[i].id);
    }
    snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
    rte_mempool_free(d->pool);
    rte_eal_cleanup();
    /* EAL leaves its (empty, with --no-shconf) runtime directory behind */
    rmdir(dir);
    free(d);
}
