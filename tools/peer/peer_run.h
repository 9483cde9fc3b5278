/* One run of a mode: what the loops share with main and the report. */
#ifndef PEER_RUN_H
#define PEER_RUN_H

#include <signal.h>
#include <stdint.h>
#include <time.h>

#include "tools/peer/peer_opts.h"
#include "tools/peer/peer_sock.h"
#include "tools/peer/peer_stats.h"

#define NS_PER_SEC 1000000000ull

struct peer_run;
struct peer_gen;

/* Set by the SIGINT/SIGTERM handler; the loops stop at the next batch. */
extern volatile sig_atomic_t peer_stop;

struct mmsghdr;

/* The transport under the loops: the UDP socket (peer_sock.c) or DPDK
 * vhost ports (peer_dpdk.c). */
struct peer_io {
    /* Hands n frames to the wire: how many it took, or -errno. */
    int (*send)(struct peer_run *r, struct mmsghdr *msgs, uint32_t n);
    /* Until CLOCK_MONOTONIC at_ns, or a stop signal: the pacing wait. */
    void (*wait)(struct peer_run *r, uint64_t at_ns);
    const char *local; /* for the report: where frames leave or arrive */
    int rcvbuf, sndbuf;
    void *ctx;
};

/* vnperf-peer-dpdk --warmup: the frames sent before the clock started,
 * those the guest's full ring refused, those back by the start, and how
 * long it all took. */
struct peer_warmup {
    uint64_t sent, ring_full, returned, ns;
};

struct peer_run {
    const struct peer_opts *o;
    const struct peer_sock *sock; /* count and reflect over UDP */
    const struct peer_io *io;
    struct peer_stats *st;
    uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
    uint64_t start_unix_ns;    /* CLOCK_REALTIME at start, to line up with other logs */
    const char *stop;          /* why the loop ended: count, duration, idle, signal, error */
    uint64_t next_progress_ns;
    const struct peer_warmup *warmup; /* send after a --warmup, else NULL */
    const struct peer_gen *gen;       /* send --stream-file, else NULL */
};

static inline uint64_t peer_now_ns(clockid_t clk)
{
    struct timespec ts;

    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* The UDP socket's peer_io operations. */
int peer_sock_send(struct peer_run *r, struct mmsghdr *msgs, uint32_t n);
void peer_sleep_until(struct peer_run *r, uint64_t at_ns);

/* count and reflect. 0, or -errno when the run had to stop on an error
 * (r->stop is then "error" and the counters so far are valid). */
int peer_run_rx(struct peer_run *r);

/* A batch of frames arrives at now (CLOCK_MONOTONIC): first/last times,
 * the TSC for latency. Then peer_stats_rx per frame. */
void peer_rx_batch_start(struct peer_run *r, uint64_t now);

/* Why a receiving run ends now (signal, count, duration, idle), or NULL. */
const char *peer_rx_done(const struct peer_run *r, uint64_t now);

/* send; same contract. */
int peer_run_tx(struct peer_run *r);

struct iovec;

/* Sends n frames (iov: each msgs[i]'s one buffer). ECONNREFUSED (nobody
 * at the remote yet) consumes the pending error without sending, so the
 * frame is retried. 0, or -errno. */
int peer_tx_send(struct peer_run *r, struct mmsghdr *msgs, const struct iovec *iov, uint32_t n);

/* Why a sending run ends now (signal, count, duration), or NULL. */
const char *peer_tx_done(const struct peer_run *r, uint64_t now);

/* Once a second (with --progress), one human line on stderr. */
void peer_progress(struct peer_run *r, uint64_t now_ns);

/* Exit status of a peer whose result line did not reach its output (a
 * full disk): a run without its result is no run (docs/peer.md). */
#define PEER_EXIT_OUTPUT 4

/* The result: one JSON object on one line. 0, or -errno of the write or
 * flush that failed. */
int peer_report_json(FILE *f, const struct peer_run *r);

/* peer_report_json to stdout; on failure one line on stderr naming the
 * errno. 0 or PEER_EXIT_OUTPUT. */
int peer_report_stdout(const char *prog, const struct peer_run *r);

#endif
