/* vnperf-peer: host-side peer for QEMU's dgram/socket netdevs. See
 * docs/peer.md and --help. */
#include "tools/peer/peer_gen_run.h"
#include "tools/peer/peer_run.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define EXIT_RUNTIME 1
#define EXIT_USAGE   2

volatile sig_atomic_t peer_stop;

static void on_signal(int sig)
{
    if (sig == SIGUSR1)
        peer_gen_go = 1;
    else
        peer_stop = 1;
}

/* No SA_RESTART: a blocked poll/sendmmsg returns EINTR and the loop ends. */
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

/* send --stream-file: its streams out, what arrives counted, two result
 * lines (send, then count). */
static int run_gen(struct peer_run *r, struct peer_gen *g, struct peer_stats *rst)
{
    struct peer_opts ro = *r->o;
    struct peer_run rx = *r;
    int rc, rx_rc, out;

    ro.mode = PEER_MODE_COUNT;
    ro.count = ro.duration_ns = ro.idle_ns = 0;
    ro.progress = false;
    rx.o = &ro;
    rx.st = rst;
    rc = peer_gen_run(r, &rx, g, &rx_rc);
    if (peer_sock_drops(r->sock->fd, &rst->sock_drops) != 0)
        fprintf(stderr, "vnperf-peer: socket drop counter unavailable: %s\n", strerror(errno));
    out = peer_report_stdout("vnperf-peer", r);
    out = out ? out : peer_report_stdout("vnperf-peer", &rx);
    rc = rc < 0 ? rc : rx_rc;
    if (rc < 0) {
        fprintf(stderr, "vnperf-peer: send stopped: %s\n", strerror(-rc));
        return EXIT_RUNTIME;
    }
    return out;
}

/* send --hold: the socket open until the hold ends or a stop signal
 * (nanosleep returns early on it: no SA_RESTART). */
static void hold_open(uint64_t hold_ns)
{
    uint64_t now = peer_now_ns(CLOCK_MONOTONIC), end = now + hold_ns;

    while (!peer_stop && now < end) {
        uint64_t left = end - now < 100000000u ? end - now : 100000000u;
        struct timespec ts = {0, (long)left};

        nanosleep(&ts, NULL);
        now = peer_now_ns(CLOCK_MONOTONIC);
    }
}

static int run(const struct peer_opts *o, struct peer_stats *st, struct peer_gen *g,
               struct peer_stats *rst)
{
    struct peer_sock sock;
    char local[PEER_ADDR_STRLEN];
    struct peer_io io = {.send = peer_sock_send, .wait = peer_sleep_until, .local = local};
    struct peer_run r = {.o = o, .sock = &sock, .io = &io, .st = st};
    char err[256];
    int rc, out;

    if (o->tx_vhost || o->rx_vhost) {
        fprintf(stderr, "vnperf-peer: --tx-vhost/--rx-vhost are vnperf-peer-dpdk's\n");
        return EXIT_USAGE;
    }
    rc = peer_sock_open(o, &sock, err, sizeof(err));
    if (rc == 0 && o->rx_if)
        snprintf(local, sizeof(local), "%s", o->rx_if);
    else if (rc == 0)
        peer_addr_str(&sock.local, local);
    if (rc == 0 && o->ready_file)
        rc = peer_ready_file(o->ready_file, local, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "vnperf-peer: %s\n", err);
        if (sock.fd >= 0)
            close(sock.fd);
        return EXIT_RUNTIME;
    }
    io.rcvbuf = sock.rcvbuf;
    io.sndbuf = sock.sndbuf;
    r.start_unix_ns = peer_now_ns(CLOCK_REALTIME);
    r.start_ns = peer_now_ns(CLOCK_MONOTONIC);
    if (g) {
        out = run_gen(&r, g, rst);
        close(sock.fd);
        return out;
    }
    rc = o->mode == PEER_MODE_SEND ? peer_run_tx(&r) : peer_run_rx(&r);
    if (rc == 0 && o->hold_ns)
        hold_open(o->hold_ns);
    if (o->mode != PEER_MODE_SEND && peer_sock_drops(sock.fd, &st->sock_drops) != 0)
        fprintf(stderr, "vnperf-peer: socket drop counter unavailable: %s\n", strerror(errno));
    out = peer_report_stdout("vnperf-peer", &r);
    close(sock.fd);
    if (rc < 0) {
        fprintf(stderr, "vnperf-peer: %s stopped: %s\n", peer_mode_name(o->mode), strerror(-rc));
        return EXIT_RUNTIME;
    }
    return out;
}

int main(int argc, char **argv)
{
    struct peer_opts o;
    struct peer_stats *st, *rst = NULL;
    static struct peer_gen g;
    char err[256];
    int rc = peer_args_parse(argc, argv, &o, err, sizeof(err));

    if (rc == PEER_ARGS_HELP) {
        peer_args_usage(stdout);
        return 0;
    }
    if (rc < 0) {
        fprintf(stderr, "vnperf-peer: %s\n", err);
        return EXIT_USAGE;
    }
    if (o.stream_file && peer_gen_open(&o, &g, err, sizeof(err)) < 0) {
        fprintf(stderr, "vnperf-peer: %s\n", err);
        return EXIT_USAGE;
    }
    if (install_signals() != 0) {
        fprintf(stderr, "vnperf-peer: sigaction: %s\n", strerror(errno));
        return EXIT_RUNTIME;
    }
    st = peer_stats_new();
    if (st && o.latency && peer_stats_latency(st, __rdtsc(), peer_now_ns(CLOCK_MONOTONIC_RAW))) {
        peer_stats_free(st);
        st = NULL;
    }
    if (st && o.stream_file && !(rst = peer_stats_new())) {
        peer_stats_free(st);
        st = NULL;
    }
    if (!st) {
        fprintf(stderr, "vnperf-peer: out of memory\n");
        return EXIT_RUNTIME;
    }
    rc = run(&o, st, o.stream_file ? &g : NULL, rst);
    peer_stats_free(st);
    if (rst)
        peer_stats_free(rst);
    if (o.stream_file)
        peer_gen_free(&g);
    return rc;
}
