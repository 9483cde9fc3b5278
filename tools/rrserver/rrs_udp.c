/* UDP_RR: every datagram is a request, answered at once. */
#include <errno.h>
#include <poll.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include "tools/rrserver/rrs.h"

static uint8_t rrs_in[65536], rrs_out[RRS_MSG_MAX];
/* Answers sent in full per client port: the runner maps each port's flow
 * to the guest's queue pair (analysis/rss.py). */
static uint64_t rrs_by_port[65536];

/* The client's port of an IPv4 or IPv6 source address. */
static uint16_t rrs_port_of(const struct sockaddr_storage *a)
{
    if (a->ss_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
    return ntohs(((const struct sockaddr_in *)a)->sin_port);
}

void rrs_udp_ports_print(FILE *f)
{
    const char *sep = "";
    fputs("[", f);
    for (unsigned p = 0; p < 65536; p++) {
        if (!rrs_by_port[p])
            continue;
        fprintf(f, "%s[%u, %llu]", sep, p, (unsigned long long)rrs_by_port[p]);
        sep = ", ";
    }
    fputs("]", f);
}

/* Answers what is queued on fd now. */
static void rrs_udp_drain(const struct rrs_opts *o, int fd, struct rrs_stats *st)
{
    for (;;) {
        struct sockaddr_storage from; /* IPv4 or IPv6 */
        socklen_t fl = sizeof(from);
        ssize_t n =
            recvfrom(fd, rrs_in, sizeof(rrs_in), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                st->io_errors++;
            return;
        }
        rrs_udp_answer(o, rrs_in, (size_t)n, rrs_out, st);
        ssize_t w = sendto(fd, rrs_out, o->resp, 0, (struct sockaddr *)&from, fl);
        if (w == (ssize_t)o->resp) {
            st->transactions++;
            rrs_by_port[rrs_port_of(&from)]++;
            st->resp_bytes += (uint64_t)w;
        } else {
            st->io_errors++;
        }
    }
}

int rrs_run_udp(const struct rrs_opts *o, int fd, struct rrs_stats *st)
{
    struct pollfd pfd = {fd, POLLIN, 0};
    while (!rrs_stop) {
        int r = poll(&pfd, 1, 100);
        if (r < 0 && errno != EINTR)
            return -errno;
        if (r > 0)
            rrs_udp_drain(o, fd, st);
    }
    return 0;
}
