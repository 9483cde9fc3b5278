/* vnperf frames the peer received, by flow (IP addresses and ports):
 * with several queue pairs the guest sends each flow on a pair it derives
 * from the flow, so the runner can add the flows up per pair. A fixed
 * table: frames of flows beyond it are counted apart, never dropped
 * silently. */
#ifndef PEER_FLOWS_H
#define PEER_FLOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PEER_MAX_FLOWS 1024

/* IPv6 addresses as on the wire; an IPv4 one mapped (pkt_ip_addrs), so
 * both families share one table. */
struct peer_flow_key {
    uint8_t saddr[16], daddr[16];
    uint16_t sport, dport;
};

struct peer_flow {
    bool used;
    struct peer_flow_key key;
    uint64_t packets, bytes;
};

struct peer_flows {
    struct peer_flow *slot; /* 2 * PEER_MAX_FLOWS, open addressing */
    uint32_t n;
    uint64_t overflow; /* frames of flows beyond PEER_MAX_FLOWS, not counted by flow */
    struct peer_flow *last;
};

int peer_flows_init(struct peer_flows *f);
void peer_flows_free(struct peer_flows *f);

/* Accounts one frame of flow k, len bytes. */
void peer_flows_add(struct peer_flows *f, const struct peer_flow_key *k, size_t len);

/* The used entries sorted by (saddr, daddr, sport, dport) into out (room
 * for PEER_MAX_FLOWS); returns how many. */
uint32_t peer_flows_sorted(const struct peer_flows *f, const struct peer_flow **out);

/* ,"flows":[{"src":"A","sport":P,"dst":"B","dport":Q,"packets":N,"bytes":M},...],
 * "flows_overflow":N: the result line's members (docs/peer.md). */
void peer_flows_json(FILE *out, const struct peer_flows *f);

#endif
