/* vnperf-rrserver (see rrs.h): the socket, the loop, the report. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <sys/socket.h>

#include "tools/rrserver/rrs.h"

#define EXIT_RUNTIME 1
#define EXIT_USAGE   2

volatile sig_atomic_t rrs_stop;

static void on_stop(int sig)
{
    (void)sig;
    rrs_stop = 1;
}

/* The bound (and, for TCP, listening) socket, or -errno. */
static int rrs_socket(const struct rrs_opts *o)
{
    int tcp = o->proto == RRS_TCP;
    int v6 = o->family == AF_INET6;
    int fd = socket(v6 ? AF_INET6 : AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
    if (fd < 0)
        return -errno;
    int one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(o->port)};
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(o->port)};
    /* both checked by rrs_args */
    if (v6)
        inet_pton(AF_INET6, o->bind, &a6.sin6_addr);
    else
        inet_pton(AF_INET, o->bind, &a.sin_addr);
    struct sockaddr *sa = v6 ? (struct sockaddr *)&a6 : (struct sockaddr *)&a;
    socklen_t sl = v6 ? sizeof(a6) : sizeof(a);
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) || bind(fd, sa, sl) ||
        (tcp && listen(fd, 256)) || (tcp && fcntl(fd, F_SETFL, O_NONBLOCK))) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

static void rrs_report(const struct rrs_opts *o, const struct rrs_stats *st)
{
    printf("{\"proto\": \"%s\", \"port\": %u, \"req_size\": %u, \"resp_size\": %u, "
           "\"transactions\": %llu, \"sessions\": %llu, \"req_bytes\": %llu, "
           "\"resp_bytes\": %llu, \"short_msgs\": %llu, \"refused\": %llu, \"io_errors\": %llu, "
           "\"udp_ports\": ",
           o->proto == RRS_TCP ? "tcp" : "udp", o->port, o->req, o->resp,
           (unsigned long long)st->transactions, (unsigned long long)st->sessions,
           (unsigned long long)st->req_bytes, (unsigned long long)st->resp_bytes,
           (unsigned long long)st->short_msgs, (unsigned long long)st->refused,
           (unsigned long long)st->io_errors);
    rrs_udp_ports_print(stdout);
    fputs("}\n", stdout);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct rrs_opts o;
    char err[256];
    if (rrs_args(argc, argv, &o, err, sizeof(err))) {
        fprintf(stderr, "vnperf-rrserver: %s\n", err);
        return EXIT_USAGE;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop; /* no SA_RESTART: a blocked wait returns */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int fd = rrs_socket(&o);
    if (fd < 0) {
        fprintf(stderr, "vnperf-rrserver: %s port %u: %s\n", o.proto == RRS_TCP ? "tcp" : "udp",
                o.port, strerror(-fd));
        return EXIT_RUNTIME;
    }
    if (o.ready_file) {
        FILE *f = fopen(o.ready_file, "w");
        if (!f || fclose(f)) {
            fprintf(stderr, "vnperf-rrserver: %s: %s\n", o.ready_file, strerror(errno));
            return EXIT_RUNTIME;
        }
    }
    struct rrs_stats st = {0};
    int r = o.proto == RRS_TCP ? rrs_run_tcp(&o, fd, &st) : rrs_run_udp(&o, fd, &st);
    close(fd);
    rrs_report(&o, &st);
    if (r < 0) {
        fprintf(stderr, "vnperf-rrserver: stopped: %s\n", strerror(-r));
        return EXIT_RUNTIME;
    }
    return 0;
}
