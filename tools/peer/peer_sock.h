/* The peer's UDP socket and the ready file that tells the runner it is
 * bound. */
#ifndef PEER_SOCK_H
#define PEER_SOCK_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/peer/peer_opts.h"

struct peer_sock {
    int fd;
    struct sockaddr_in local; /* as bound (the real port when 0 was asked for) */
    int rcvbuf, sndbuf;       /* what the kernel granted */
    uint32_t frame_max;       /* --rx-if: its MTU's frame (peer_frame_gso); else 0 */
};

/* Opens, sizes, binds and (with a remote) connects the socket; with
 * --rx-if, a packet socket on that interface (local unset). -errno with
 * one line saying which step failed in err. */
int peer_sock_open(const struct peer_opts *o, struct peer_sock *s, char *err, size_t errlen);

/* Frames the kernel dropped because our receive buffer was full. */
int peer_sock_drops(int fd, uint64_t *drops);

/* Writes {"pid":N,"local":"LOCAL"} to path atomically (temp + rename):
 * LOCAL is IP:PORT, or vnperf-peer-dpdk's first vhost socket. */
int peer_ready_file(const char *path, const char *local, char *err, size_t errlen);

/* "IP:PORT" of a into buf (at least PEER_ADDR_STRLEN bytes). */
#define PEER_ADDR_STRLEN 24
void peer_addr_str(const struct sockaddr_in *a, char *buf);

#endif
