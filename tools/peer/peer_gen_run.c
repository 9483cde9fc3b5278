/* send --stream-file: the file's rx streams go out on the socket as the
 * stream scheduler says, while a second thread counts what arrives on
 * the same socket (the guest's tx streams) as count does. */
#define _GNU_SOURCE
#include "tools/peer/peer_gen_run.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <x86intrin.h>

/* Longest pacing wait between checks of the stop flag: a signal the
 * receiving thread took is seen this soon. */
#define GEN_WAIT_MAX_NS 100000000ull
#define GEN_SEED        0x5eedull
#define GEN_GO_POLL_NS  10000000ull

volatile sig_atomic_t peer_gen_go;

int peer_gen_open(const struct peer_opts *o, struct peer_gen *g, char *err, size_t errlen)
{
    static char text[STREAM_TEXT_MAX];
    struct stream_addrs d = {
        .sip = o->flow.saddr, .dip = o->flow.daddr, .sport = o->flow.sport, .dport = o->flow.dport};
    char why[160];
    FILE *f = fopen(o->stream_file, "r");
    size_t n;

    if (!f) {
        snprintf(err, errlen, "--stream-file %s: %s", o->stream_file, strerror(errno));
        return -EINVAL;
    }
    n = fread(text, 1, sizeof(text), f);
    fclose(f);
    if (n == sizeof(text)) {
        snprintf(err, errlen, "--stream-file %s: above %d bytes", o->stream_file,
                 STREAM_TEXT_MAX - 1);
        return -EINVAL;
    }
    text[n] = '\0';
    memcpy(d.smac, o->src_mac, 6);
    memcpy(d.dmac, o->dst_mac, 6);
    if (peer_gen_load(g, text, &d, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "--stream-file %s: %s", o->stream_file, why);
        return -EINVAL;
    }
    return 0;
}

struct gen_ring {
    uint8_t *bufs;
    struct mmsghdr *msgs;
    struct iovec *iov;
};

static void ring_free(struct gen_ring *q)
{
    free(q->bufs);
    free(q->msgs);
    free(q->iov);
}

static int ring_alloc(struct gen_ring *q, uint32_t batch, uint16_t maxlen)
{
    q->bufs = calloc(batch, maxlen);
    q->msgs = calloc(batch, sizeof(*q->msgs));
    q->iov = calloc(batch, sizeof(*q->iov));
    if (!q->bufs || !q->msgs || !q->iov) {
        ring_free(q);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < batch; i++) {
        q->iov[i].iov_base = q->bufs + (size_t)i * maxlen;
        q->msgs[i].msg_hdr.msg_iov = &q->iov[i];
        q->msgs[i].msg_hdr.msg_iovlen = 1;
    }
    return 0;
}

/* The frames due at rel (ns since the start), at most want: how many. */
static uint32_t fill(struct peer_gen *g, struct gen_ring *q, uint32_t want, uint64_t rel)
{
    uint32_t n = 0;
    int k;

    while (n < want && (k = peer_gen_pick(g, rel)) >= 0) {
        q->iov[n].iov_len = peer_gen_frame(g, (unsigned)k, q->iov[n].iov_base, rel, __rdtsc());
        n++;
    }
    return n;
}

/* Until the next frame is due, the end of --duration, or a while. */
static void wait_next(struct peer_run *r, const struct peer_gen *g, uint64_t now)
{
    uint64_t at = now + GEN_WAIT_MAX_NS, next = peer_gen_next(g);

    if (next != UINT64_MAX && r->start_ns + next < at)
        at = r->start_ns + next;
    if (r->o->duration_ns && r->start_ns + r->o->duration_ns < at)
        at = r->start_ns + r->o->duration_ns;
    r->io->wait(r, at);
}

/* --start-on-usr1: the clock starts when the guest app is ready (its
 * frames before that would find no driver to take them). */
static void wait_go(struct peer_run *r)
{
    if (!r->o->start_on_usr1)
        return;
    while (!peer_gen_go && !peer_stop)
        peer_sleep_until(r, peer_now_ns(CLOCK_MONOTONIC) + GEN_GO_POLL_NS);
    r->start_ns = peer_now_ns(CLOCK_MONOTONIC);
}

static int gen_loop(struct peer_run *r, struct peer_gen *g)
{
    const struct peer_opts *o = r->o;
    struct gen_ring q;
    int rc = ring_alloc(&q, o->batch, g->maxlen);

    wait_go(r);
    if (rc == 0)
        rc = peer_gen_start(g, 0, GEN_SEED);
    if (rc < 0) {
        r->stop = "error";
        return rc;
    }
    for (;;) {
        uint64_t now = peer_now_ns(CLOCK_MONOTONIC);
        uint32_t want = o->batch, n;

        r->stop = peer_tx_done(r, now);
        if (!r->stop && peer_gen_done(g))
            r->stop = "count";
        if (r->stop)
            break;
        peer_progress(r, now);
        if (o->count && o->count - r->st->packets < want)
            want = (uint32_t)(o->count - r->st->packets);
        n = fill(g, &q, want, now - r->start_ns);
        if (n == 0) {
            wait_next(r, g, now);
            continue;
        }
        rc = peer_tx_send(r, q.msgs, q.iov, n);
        if (rc < 0) {
            r->stop = "error";
            break;
        }
    }
    r->end_ns = peer_now_ns(CLOCK_MONOTONIC);
    ring_free(&q);
    return rc;
}

static void *count_thread(void *arg)
{
    struct peer_run *rx = arg;

    return (void *)(intptr_t)peer_run_rx(rx);
}

int peer_gen_run(struct peer_run *tx, struct peer_run *rx, struct peer_gen *g, int *rx_rc)
{
    pthread_t t;
    void *ret;
    int rc = pthread_create(&t, NULL, count_thread, rx);

    if (rc != 0) {
        tx->stop = rx->stop = "error";
        return -rc;
    }
    tx->gen = g;
    rc = gen_loop(tx, g);
    /* The count goes on until the stop signal: the guest's last frames. */
    pthread_join(t, &ret);
    *rx_rc = (int)(intptr_t)ret;
    return rc;
}
