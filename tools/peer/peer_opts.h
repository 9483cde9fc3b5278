/* Command line of vnperf-peer: one mode per run and its options. */
#ifndef PEER_OPTS_H
#define PEER_OPTS_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/peer/peer_frame.h"
#include "tools/peer/peer_malform.h"

enum peer_mode { PEER_MODE_COUNT, PEER_MODE_SEND, PEER_MODE_REFLECT };

#define PEER_BATCH_DEFAULT     64
#define PEER_BATCH_MAX         256
#define PEER_SOCKBUF_DEFAULT   (32 * 1024 * 1024)
#define PEER_ARGS_HELP         1
#define PEER_LINK_WAIT_DEFAULT (60ull * 1000000000ull)
#define PEER_VHOST_PATH_MAX    107 /* sun_path less its NUL */

struct peer_opts {
    enum peer_mode mode;
    struct sockaddr_in local, remote;
    bool have_remote;
    uint64_t count;       /* frames; 0: no limit */
    uint64_t duration_ns; /* 0: no limit */
    uint64_t idle_ns;     /* silence after the first frame; 0: no limit */
    uint32_t size;
    uint8_t src_mac[ETH_ALEN], dst_mac[ETH_ALEN];
    struct pkt_flow flow; /* flow.stream: the first stream */
    uint32_t streams;
    uint64_t rate; /* frames per second; 0: as fast as possible */
    /* send --rate: the most the sender may be behind its schedule; frames
     * due beyond that are skipped, never sent in a burst (0: no limit) */
    uint64_t max_lag_ns;
    uint32_t batch;
    enum peer_malformed malformed;
    const char *ready_file;
    bool progress, verify_csum;
    bool latency;      /* count: one-way latency from this host's TSC stamps */
    bool payload_only; /* send: the UDP payload only, for a kernel UDP socket */
    uint64_t sockbuf;
    /* count: every frame this interface receives (AF_PACKET), whatever its
     * addresses and ports, instead of a UDP socket's (a tap's host end) */
    const char *rx_if;
    /* vnperf-peer-dpdk: net_vhost server sockets (QEMU connects to them) */
    const char *tx_vhost; /* send: frames go into this guest's RX ring */
    const char *rx_vhost; /* count, or send too (PVP): frames from this guest */
    uint64_t link_wait_ns;
    bool start_on_usr1; /* send: the clock starts at SIGUSR1 (the guest app is ready) */
    uint64_t warmup_ns; /* send with --rx-vhost: frames this long before the clock, apart */
    /* send: the stream file's rx streams instead of --size's frames, and
     * what arrives on the socket counted too (tools/peer/peer_gen.h) */
    const char *stream_file;
    /* send: after the last frame the socket stays open this long, or
     * until a stop signal, so frames the guest sends back to it queue
     * there instead of drawing ICMP port unreachables towards the guest */
    uint64_t hold_ns;
};

const char *peer_mode_name(enum peer_mode m);

/* Fills o from argv. Returns 0, PEER_ARGS_HELP when help was asked for, or
 * -EINVAL with one line saying what is wrong in err. */
int peer_args_parse(int argc, char **argv, struct peer_opts *o, char *err, size_t errlen);

void peer_args_usage(FILE *f);

#endif
