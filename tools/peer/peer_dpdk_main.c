/* vnperf-peer-dpdk: the host peer over DPDK net_vhost ports instead of a
 * UDP socket (docs/peer.md). Frame building, pacing, sequence tracking and
 * the result line are vnperf-peer's own; only the transport differs. */
#include "tools/peer/peer_dpdk.h"

#include <errno.h>
#include <string.h>
#include <x86intrin.h>

#define EXIT_RUNTIME 1
#define EXIT_USAGE   2

volatile sig_atomic_t peer_stop;

static void on_signal(int sig)
{
    if (sig == SIGUSR1)
        peer_dpdk_go = 1;
    else
        peer_stop = 1;
}

/* No SA_RESTART: a pacing sleep returns early on a stop signal. SIGUSR1 is
 * caught before the ready file exists, so an early one is not fatal. */
static int install_signals(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0 ||
        sigaction(SIGUSR1, &sa, NULL) != 0)
        return -errno;
    return 0;
}

static struct peer_stats *stats_new(const struct peer_opts *o)
{
    struct peer_stats *st = peer_stats_new();

    if (st && o->latency && peer_stats_latency(st, __rdtsc(), peer_now_ns(CLOCK_MONOTONIC_RAW))) {
        peer_stats_free(st);
        st = NULL;
    }
    return st;
}

/* --warmup: its frames get this long to come back before the clock starts. */
#define WARMUP_DRAIN_NS 1000000000ull

/* --warmup: the same frames at the same rate before the clock starts,
 * counted apart, then the clock waits until they are back: the guest's
 * first frames (code run for the first time under TCG, its first full
 * bursts) cost it milliseconds once, which a trial would count as the
 * device's loss at any rate whose ring covers less (docs/runner-run.md). */
static int warmup(struct peer_dpdk *d, const struct peer_opts *o, struct peer_io *tio,
                  struct peer_io *rio, const struct peer_opts *ro, struct peer_warmup *w)
{
    struct peer_opts wo = *o;
    struct peer_stats *st = peer_stats_new(), *rst = peer_stats_new();
    struct peer_run tx = {.o = &wo, .io = tio, .st = st}, rx = {.o = ro, .io = rio, .st = rst};
    int rc = -ENOMEM;

    wo.count = 0;
    wo.duration_ns = o->warmup_ns;
    wo.progress = false;
    if (st && rst) {
        peer_dpdk_io(d, tio, &rx);
        peer_dpdk_io(d, rio, &rx);
        tx.start_ns = rx.start_ns = peer_now_ns(CLOCK_MONOTONIC);
        rc = peer_run_tx(&tx);
        peer_dpdk_drain(d, st->packets - st->ring_full,
                        peer_now_ns(CLOCK_MONOTONIC) + WARMUP_DRAIN_NS);
        *w = (struct peer_warmup){.sent = st->packets,
                                  .ring_full = st->ring_full,
                                  .returned = rst->packets,
                                  .ns = peer_now_ns(CLOCK_MONOTONIC) - tx.start_ns};
    }
    if (st)
        peer_stats_free(st);
    if (rst)
        peer_stats_free(rst);
    return rc;
}

/* The clock starts when the guests are up. send with --rx-vhost counts
 * the returning frames while it paces, then on until its stop. */
static int run(struct peer_dpdk *d, const struct peer_opts *o, struct peer_stats *st,
               struct peer_stats *rst)
{
    struct peer_opts ro = *o;
    struct peer_io tio = {.local = o->tx_vhost}, rio = {.local = o->rx_vhost};
    struct peer_run tx = {.o = o, .io = &tio, .st = st};
    struct peer_run rx = {.o = &ro, .io = &rio, .st = rst};
    struct peer_warmup w;
    int rc = 0, out = 0;

    ro.mode = PEER_MODE_COUNT;
    if (o->mode == PEER_MODE_SEND)
        ro.count = ro.duration_ns = 0;
    if (o->warmup_ns) {
        rc = warmup(d, o, &tio, &rio, &ro, &w);
        if (rc < 0) {
            fprintf(stderr, "vnperf-peer-dpdk: warmup: %s\n", strerror(-rc));
            return EXIT_RUNTIME;
        }
        tx.warmup = &w;
    }
    peer_dpdk_io(d, &tio, o->rx_vhost ? &rx : NULL);
    peer_dpdk_io(d, &rio, o->rx_vhost ? &rx : NULL);
    tx.start_unix_ns = rx.start_unix_ns = peer_now_ns(CLOCK_REALTIME);
    tx.start_ns = rx.start_ns = peer_now_ns(CLOCK_MONOTONIC);
    if (o->mode == PEER_MODE_SEND) {
        rc = peer_run_tx(&tx);
        out = peer_report_stdout("vnperf-peer-dpdk", &tx);
    }
    if (o->rx_vhost) {
        peer_dpdk_count(&rx);
        out = out ? out : peer_report_stdout("vnperf-peer-dpdk", &rx);
    }
    if (rc < 0) {
        fprintf(stderr, "vnperf-peer-dpdk: send stopped: %s\n", strerror(-rc));
        return EXIT_RUNTIME;
    }
    return out;
}

static int open_and_run(const struct peer_opts *o, struct peer_stats *st, struct peer_stats *rst)
{
    struct peer_dpdk *d = NULL;
    char err[512];
    int rc = peer_dpdk_open(o, &d, err, sizeof(err));

    if (rc == 0 && o->ready_file)
        rc = peer_ready_file(o->ready_file, o->tx_vhost ? o->tx_vhost : o->rx_vhost, err,
                             sizeof(err));
    if (rc == 0)
        rc = peer_dpdk_wait_up(d, o, err, sizeof(err));
    if (rc < 0 && rc != -EINTR) {
        fprintf(stderr, "vnperf-peer-dpdk: %s\n", err);
        if (d)
            peer_dpdk_close(d);
        return rc == -ETIMEDOUT ? PEER_DPDK_EXIT_NO_LINK : EXIT_RUNTIME;
    }
    /* stopped before the guest came up: the result line all the same */
    rc = run(d, o, st, rst);
    peer_dpdk_close(d);
    return rc;
}

/* What vnperf-peer's parser takes but this transport does not. */
static const char *unsupported(const struct peer_opts *o)
{
    if (!o->tx_vhost && !o->rx_vhost)
        return "vnperf-peer-dpdk needs --tx-vhost or --rx-vhost (see --help)";
    if (o->mode == PEER_MODE_REFLECT)
        return "vnperf-peer-dpdk sends and counts; reflect is vnperf-peer's";
    return NULL;
}

int main(int argc, char **argv)
{
    struct peer_opts o;
    struct peer_stats *st, *rst;
    char err[256];
    int rc = peer_args_parse(argc, argv, &o, err, sizeof(err));

    if (rc == PEER_ARGS_HELP) {
        peer_args_usage(stdout);
        return 0;
    }
    if (rc == 0 && unsupported(&o))
        rc = -snprintf(err, sizeof(err), "%s", unsupported(&o));
    if (rc < 0) {
        fprintf(stderr, "vnperf-peer-dpdk: %s\n", err);
        return EXIT_USAGE;
    }
    if (install_signals() != 0) {
        fprintf(stderr, "vnperf-peer-dpdk: sigaction: %s\n", strerror(errno));
        return EXIT_RUNTIME;
    }
    st = peer_stats_new();
    rst = stats_new(&o);
    rc = st && rst ? open_and_run(&o, st, rst) : EXIT_RUNTIME;
    if (!st || !rst)
        fprintf(stderr, "vnperf-peer-dpdk: out of memory\n");
    if (st)
        peer_stats_free(st);
    if (rst)
        peer_stats_free(rst);
    return rc;
}
