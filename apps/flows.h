/* flows=: the set of UDP flows the generator cycles through. A comma list
 * of ranges and a mode, e.g. "sip:10.0.0.1-10.0.0.4,dport:5000-5003,random":
 *   sip:A[-B]  dip:A[-B]  sport:P[-Q]  dport:P[-Q]  seq | random
 * Fields not named come from ip=, dst_ip=, src_port=, dst_port=. Every
 * combination is one flow (at most FLOWS_MAX) and one stream id, so the
 * sink can account loss per flow. */
#ifndef VN_FLOWS_H
#define VN_FLOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/pkt.h"

#define FLOWS_MAX 1024

struct flows_spec {
    uint32_t sip_lo, sip_n, dip_lo, dip_n; /* n == 0: not given */
    uint32_t sport_lo, sport_n, dport_lo, dport_n;
    bool random;
};

int flows_parse(const char *s, struct flows_spec *fs, char *why, size_t whylen);

/* Config-table check hook for flows=. */
int flows_check(const char *val, char *why, size_t whylen);

/* Writes every flow (source port varies fastest, then destination port,
 * source IP, destination IP) into out; returns the count. */
unsigned flows_expand(const struct flows_spec *fs, const struct pkt_flow *base,
                      struct pkt_flow *out);

#endif
