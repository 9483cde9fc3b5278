/* send: frames stamped in place in a ring of batch buffers, handed to the
 * transport (r->io) a batch at a time, optional pacing against
 * CLOCK_MONOTONIC. */
#define _GNU_SOURCE
#include "tools/peer/peer_run.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <x86intrin.h>

#define GARBAGE_SEED 0x9e3779b97f4a7c15ull

struct tx_ring {
    uint8_t *pristine; /* a good frame, for modes that spoil a copy */
    uint8_t *bufs;
    struct mmsghdr *msgs;
    struct iovec *iov;
    struct pkt_tmpl *tmpl; /* one per stream: the stream id is in the UDP sum */
};

/* Bytes of each frame not handed to the socket: --payload-only leaves the
 * Ethernet, IPv4 and UDP headers to the kernel. */
static size_t tx_skip(const struct peer_opts *o)
{
    return o->payload_only ? PKT_HDRS_LEN : 0;
}

static void ring_free(struct tx_ring *q)
{
    free(q->pristine);
    free(q->bufs);
    free(q->msgs);
    free(q->iov);
    free(q->tmpl);
}

static int ring_alloc(struct tx_ring *q, const struct peer_opts *o)
{
    size_t size = o->size;
    int rc = 0;

    q->pristine = malloc(size);
    q->bufs = malloc(size * o->batch);
    q->msgs = calloc(o->batch, sizeof(*q->msgs));
    q->iov = calloc(o->batch, sizeof(*q->iov));
    q->tmpl = calloc(o->streams, sizeof(*q->tmpl));
    if (!q->pristine || !q->bufs || !q->msgs || !q->iov || !q->tmpl) {
        ring_free(q);
        return -ENOMEM;
    }
    /* the last build leaves the first stream's frame in pristine */
    for (uint32_t s = o->streams; s-- > 0 && rc == 0;) {
        struct pkt_flow fl = o->flow;

        fl.stream = o->flow.stream + s;
        rc = pkt_tmpl_build(q->pristine, (uint16_t)size, o->dst_mac, o->src_mac, &fl, &q->tmpl[s]);
    }
    if (rc < 0) {
        ring_free(q);
        return rc;
    }
    for (uint32_t i = 0; i < o->batch; i++) {
        memcpy(q->bufs + i * size, q->pristine, size);
        q->iov[i].iov_base = q->bufs + i * size + tx_skip(o);
        q->msgs[i].msg_hdr.msg_iov = &q->iov[i];
        q->msgs[i].msg_hdr.msg_iovlen = 1;
    }
    return 0;
}

/* Frames that should have left by now under --rate (the first at start). */
static uint64_t frames_due(const struct peer_run *r, uint64_t now)
{
    unsigned __int128 elapsed = now - r->start_ns;

    return (uint64_t)(elapsed * r->o->rate / NS_PER_SEC) + 1;
}

void peer_sleep_until(struct peer_run *r, uint64_t at_ns)
{
    struct timespec ts = {.tv_sec = (time_t)(at_ns / NS_PER_SEC),
                          .tv_nsec = (long)(at_ns % NS_PER_SEC)};

    (void)r;
    /* EINTR (a stop signal) just ends the sleep early */
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/* Frames due now that were not sent or skipped; past --max-lag the
 * excess is skipped: a sender that did not get a CPU for a while would
 * otherwise send it in one burst, a load the device was never meant to be
 * offered, and its loss would be the sender's. */
static uint64_t frames_behind(struct peer_run *r, uint64_t now)
{
    struct peer_stats *st = r->st;
    uint64_t due = frames_due(r, now), done = st->packets + st->skipped, lag;

    if (due <= done)
        return 0;
    lag = due - done;
    if (lag > st->behind_max)
        st->behind_max = lag;
    if (r->o->max_lag_ns) {
        uint64_t cap = (uint64_t)((unsigned __int128)r->o->max_lag_ns * r->o->rate / NS_PER_SEC);

        if (cap < r->o->batch)
            cap = r->o->batch;
        if (lag > cap) {
            st->skipped += lag - cap;
            lag = cap;
        }
    }
    return lag;
}

/* Waits until the frame is due, or the end of --duration if sooner. */
static void wait_for_frame(struct peer_run *r, uint64_t frame)
{
    uint64_t at = r->start_ns + (uint64_t)((unsigned __int128)frame * NS_PER_SEC / r->o->rate);

    if (r->o->duration_ns && at > r->start_ns + r->o->duration_ns)
        at = r->start_ns + r->o->duration_ns;
    r->io->wait(r, at);
}

static void fill_batch(const struct peer_run *r, struct tx_ring *q, uint32_t n, uint64_t *rng)
{
    const struct peer_opts *o = r->o;
    uint64_t first = r->st->packets;

    for (uint32_t k = 0; k < n; k++) {
        uint8_t *f = (uint8_t *)q->iov[k].iov_base - tx_skip(o);
        uint64_t idx = first + k;
        uint32_t s = (uint32_t)(idx % o->streams);

        if (o->malformed)
            memcpy(f, q->pristine, o->size);
        if (o->streams > 1) {
            struct pkt_flow fl = o->flow;

            fl.stream = o->flow.stream + s;
            pkt_set_flow(f, &fl, &q->tmpl[s]);
        }
        pkt_patch(f, &q->tmpl[s], idx / o->streams, __rdtsc());
        q->iov[k].iov_len = peer_malform(f, o->size, o->malformed, idx, rng) - tx_skip(o);
    }
}

int peer_tx_send(struct peer_run *r, struct mmsghdr *msgs, const struct iovec *iov, uint32_t n)
{
    struct peer_stats *st = r->st;
    uint32_t off = 0;

    while (off < n) {
        int rc = r->io->send(r, msgs + off, n - off);
        uint64_t now;

        if (rc < 0) {
            if (rc == -EINTR && peer_stop)
                return 0;
            if (rc == -ECONNREFUSED)
                peer_stats_error(st, &st->refused, -rc);
            else if (rc != -EINTR) {
                peer_stats_error(st, &st->tx_errors, -rc);
                return rc;
            }
            continue;
        }
        now = peer_now_ns(CLOCK_MONOTONIC) - r->start_ns;
        if (st->packets == 0)
            st->first_ns = now;
        st->last_ns = now;
        for (int i = 0; i < rc; i++) {
            /* Frames as they are on the wire, with the kernel's headers. */
            size_t len = iov[off + i].iov_len + tx_skip(r->o);

            st->bytes += len;
            peer_stats_size(st, len, 1);
        }
        st->packets += (uint64_t)rc;
        off += (uint32_t)rc;
    }
    return 0;
}

const char *peer_tx_done(const struct peer_run *r, uint64_t now)
{
    const struct peer_opts *o = r->o;

    if (peer_stop)
        return "signal";
    if (o->count && r->st->packets >= o->count)
        return "count";
    if (o->duration_ns && now - r->start_ns >= o->duration_ns)
        return "duration";
    return NULL;
}

int peer_run_tx(struct peer_run *r)
{
    const struct peer_opts *o = r->o;
    uint64_t rng = GARBAGE_SEED;
    struct tx_ring q;
    int rc = ring_alloc(&q, o);

    if (rc < 0) {
        r->stop = "error";
        return rc;
    }
    for (;;) {
        uint64_t now = peer_now_ns(CLOCK_MONOTONIC);
        uint32_t want = o->batch;

        r->stop = peer_tx_done(r, now);
        if (r->stop)
            break;
        peer_progress(r, now);
        if (o->count && o->count - r->st->packets < want)
            want = (uint32_t)(o->count - r->st->packets);
        if (o->rate) {
            uint64_t behind = frames_behind(r, now);

            if (behind == 0) {
                wait_for_frame(r, r->st->packets + r->st->skipped);
                continue;
            }
            if (behind < want)
                want = (uint32_t)behind;
        }
        fill_batch(r, &q, want, &rng);
        rc = peer_tx_send(r, q.msgs, q.iov, want);
        if (rc < 0) {
            r->stop = "error";
            break;
        }
    }
    r->end_ns = peer_now_ns(CLOCK_MONOTONIC);
    ring_free(&q);
    return rc;
}
