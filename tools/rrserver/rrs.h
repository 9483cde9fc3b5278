/* vnperf-rrserver: the host end of app=rr over a backend whose host side is
 * the kernel's own stack (tap): netperf's TCP_RR/UDP_RR server. Every
 * req bytes that arrive (a UDP datagram, or req bytes of a TCP stream)
 * are answered with resp bytes; a UDP answer starts with the request's
 * first min(8, req, resp) bytes, the transaction number app=rr puts there
 * (docs/apps.md). Runs until SIGINT/SIGTERM, then prints one JSON line. */
#ifndef VN_RRS_H
#define VN_RRS_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#define RRS_MSG_MAX  65000 /* app=rr's req_size/resp_size limit */
#define RRS_SESS_MAX 1024
#define RRS_ID_LEN   8

enum rrs_proto { RRS_UDP, RRS_TCP };

struct rrs_opts {
    enum rrs_proto proto;
    const char *bind; /* IPv4 or IPv6 address */
    uint16_t port;
    uint32_t req, resp;
    const char *ready_file; /* written once the socket listens */
    int family;             /* of bind: AF_INET or AF_INET6 */
};

struct rrs_stats {
    uint64_t transactions; /* answers sent in full */
    uint64_t sessions;     /* TCP connections accepted (UDP: 0) */
    uint64_t req_bytes, resp_bytes;
    uint64_t short_msgs; /* UDP datagrams of another length than req (answered anyway) */
    uint64_t refused;    /* TCP connections past RRS_SESS_MAX */
    uint64_t io_errors;  /* reads/writes that failed other than would-block */
};

extern volatile sig_atomic_t rrs_stop;

/* 0 and *o, or -1 with one line in err. */
int rrs_args(int argc, char **argv, struct rrs_opts *o, char *err, size_t errlen);

/* The server loops; 0 at a stop signal, -errno when the socket fails. */
int rrs_run_udp(const struct rrs_opts *o, int fd, struct rrs_stats *st);
int rrs_run_tcp(const struct rrs_opts *o, int fd, struct rrs_stats *st);

/* The UDP answers per client port, as a JSON list of [port, answers]
 * (ports without one left out). */
void rrs_udp_ports_print(FILE *f);

/* A TCP stream's requests: bytes of the one being read, answers owed. */
struct rrs_stream {
    uint32_t got; /* < o->req */
    uint64_t owed;
};

/* n more bytes of a stream arrived (rrs_req.c: pure, as the request
 * parsing below, so tests/fuzz/fuzz_rrs_req.c drives it). */
void rrs_stream_add(const struct rrs_opts *o, struct rrs_stream *s, uint32_t n,
                    struct rrs_stats *st);

/* A UDP request of n bytes: counted, and the answer's first rrs_id_len
 * bytes written to out (the request's, zeros past its end); the rest of
 * the o->resp bytes are the caller's, zeros. */
void rrs_udp_answer(const struct rrs_opts *o, const uint8_t *in, size_t n, uint8_t *out,
                    struct rrs_stats *st);

/* How many leading bytes of a request an answer echoes. */
static inline uint32_t rrs_id_len(const struct rrs_opts *o)
{
    uint32_t n = o->req < o->resp ? o->req : o->resp;
    return n < RRS_ID_LEN ? n : RRS_ID_LEN;
}

#endif
