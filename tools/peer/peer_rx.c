/* count and reflect: recvmmsg batches without blocking while frames flow,
 * poll() only when the socket is empty. */
#define _GNU_SOURCE
#include "tools/peer/peer_run.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <x86intrin.h>

/* A UDP/IPv4 datagram is never longer, so no frame is ever cut. */
#define RX_SLOT (PEER_SIZE_MAX + 1)
/* Longest sleep between checks of the stop flag and the deadlines. */
#define POLL_MAX_MS 100

struct rx_ring {
    uint8_t *bufs;
    struct mmsghdr *rx, *tx;
    struct iovec *rx_iov, *tx_iov;
};

static void ring_free(struct rx_ring *q)
{
    free(q->bufs);
    free(q->rx);
    free(q->tx);
    free(q->rx_iov);
    free(q->tx_iov);
}

static int ring_alloc(struct rx_ring *q, uint32_t batch)
{
    q->bufs = malloc((size_t)batch * RX_SLOT);
    q->rx = calloc(batch, sizeof(*q->rx));
    q->tx = calloc(batch, sizeof(*q->tx));
    q->rx_iov = calloc(batch, sizeof(*q->rx_iov));
    q->tx_iov = calloc(batch, sizeof(*q->tx_iov));
    if (!q->bufs || !q->rx || !q->tx || !q->rx_iov || !q->tx_iov) {
        ring_free(q);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < batch; i++) {
        q->rx_iov[i].iov_base = q->bufs + (size_t)i * RX_SLOT;
        q->rx_iov[i].iov_len = RX_SLOT;
        q->rx[i].msg_hdr.msg_iov = &q->rx_iov[i];
        q->rx[i].msg_hdr.msg_iovlen = 1;
        q->tx[i].msg_hdr.msg_iov = &q->tx_iov[i];
        q->tx[i].msg_hdr.msg_iovlen = 1;
    }
    return 0;
}

/* Sends the n turned-around frames; a refused or failed call drops the rest
 * of the batch (counted) rather than spinning. */
static int reflect_send(struct peer_run *r, struct rx_ring *q, uint32_t n)
{
    struct peer_stats *st = r->st;
    uint32_t off = 0;

    while (off < n) {
        int rc = sendmmsg(r->sock->fd, q->tx + off, n - off, 0);

        if (rc < 0) {
            if (errno == EINTR && !peer_stop)
                continue;
            if (errno == EINTR)
                return 0;
            if (errno == ECONNREFUSED) {
                peer_stats_error(st, &st->refused, errno);
                return 0;
            }
            peer_stats_error(st, &st->tx_errors, errno);
            return -errno;
        }
        for (int i = 0; i < rc; i++)
            st->tx_bytes += q->tx_iov[off + i].iov_len;
        st->tx_packets += (uint64_t)rc;
        off += (uint32_t)rc;
    }
    return 0;
}

void peer_rx_batch_start(struct peer_run *r, uint64_t now)
{
    struct peer_stats *st = r->st;

    if (st->lat)
        st->rx_tsc = __rdtsc();
    if (st->packets == 0)
        st->first_ns = now - r->start_ns;
    st->last_ns = now - r->start_ns;
}

static int rx_batch(struct peer_run *r, struct rx_ring *q, uint32_t n, uint64_t now)
{
    const struct peer_opts *o = r->o;
    struct peer_stats *st = r->st;
    uint32_t ntx = 0;

    peer_rx_batch_start(r, now);
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *f = q->rx_iov[i].iov_base;
        size_t len = q->rx[i].msg_len;

        if (o->mode == PEER_MODE_REFLECT && peer_frame_gso(len, r->sock->frame_max)) {
            st->reflect_gso++;
            continue;
        }
        int kind = peer_stats_rx(st, f, len, o->verify_csum);
        if (o->mode != PEER_MODE_REFLECT)
            continue;
        if (!peer_frame_turns_round(kind, o->rx_if != NULL)) {
            st->reflect_left++;
            continue;
        }
        if (peer_frame_reflect(f, len) != 0) {
            st->reflect_runts++;
            continue;
        }
        q->tx_iov[ntx].iov_base = f;
        q->tx_iov[ntx].iov_len = len;
        ntx++;
    }
    return ntx ? reflect_send(r, q, ntx) : 0;
}

/* How long poll() may sleep: up to the nearest deadline, at most
 * POLL_MAX_MS so a signal that slipped in before poll() is seen soon. */
static int poll_timeout_ms(const struct peer_run *r, uint64_t now)
{
    const struct peer_opts *o = r->o;
    uint64_t wait = (uint64_t)POLL_MAX_MS * 1000000;
    uint64_t at;

    if (o->duration_ns) {
        at = r->start_ns + o->duration_ns;
        if (at > now && at - now < wait)
            wait = at - now;
    }
    if (o->idle_ns && r->st->packets) {
        at = r->start_ns + r->st->last_ns + o->idle_ns;
        if (at > now && at - now < wait)
            wait = at - now;
    }
    return (int)((wait + 999999) / 1000000);
}

const char *peer_rx_done(const struct peer_run *r, uint64_t now)
{
    const struct peer_opts *o = r->o;
    const struct peer_stats *st = r->st;

    if (peer_stop)
        return "signal";
    if (o->count && st->packets >= o->count)
        return "count";
    if (o->duration_ns && now - r->start_ns >= o->duration_ns)
        return "duration";
    if (o->idle_ns && st->packets && now - r->start_ns - st->last_ns >= o->idle_ns)
        return "idle";
    return NULL;
}

int peer_run_rx(struct peer_run *r)
{
    const struct peer_opts *o = r->o;
    struct pollfd pfd = {.fd = r->sock->fd, .events = POLLIN};
    struct rx_ring q;
    int rc = ring_alloc(&q, o->batch);

    if (rc < 0) {
        r->stop = "error";
        return rc;
    }
    for (;;) {
        uint32_t want = o->batch;
        uint64_t now;
        int n;

        /* never take more than --count asks for */
        if (o->count && o->count - r->st->packets < want)
            want = (uint32_t)(o->count - r->st->packets);
        n = recvmmsg(r->sock->fd, q.rx, want, MSG_DONTWAIT, NULL);
        rc = n < 0 ? -errno : 0;
        now = peer_now_ns(CLOCK_MONOTONIC);
        if (n > 0) {
            rc = rx_batch(r, &q, (uint32_t)n, now);
        } else if (rc == -EAGAIN) {
            rc = 0;
            if (!peer_rx_done(r, now) && poll(&pfd, 1, poll_timeout_ms(r, now)) < 0 &&
                errno != EINTR)
                rc = -errno;
            now = peer_now_ns(CLOCK_MONOTONIC);
        } else if (rc == -EINTR) {
            rc = 0;
        } else if (rc == -ECONNREFUSED) {
            /* a reflected frame was refused: the error surfaces here */
            peer_stats_error(r->st, &r->st->refused, -rc);
            rc = 0;
        } else {
            peer_stats_error(r->st, &r->st->rx_errors, -rc);
        }
        if (rc < 0) {
            r->stop = "error";
            break;
        }
        r->stop = peer_rx_done(r, now);
        if (r->stop)
            break;
        peer_progress(r, now);
    }
    r->end_ns = peer_now_ns(CLOCK_MONOTONIC);
    ring_free(&q);
    return rc;
}
