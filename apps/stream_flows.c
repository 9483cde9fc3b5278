#include "apps/stream_flows.h"

#include "apps/stream_sum.h"

void stream_flows_init(struct stream_flow *out, const struct pkt_flow *in, unsigned n,
                       const struct stream_tmpl *t)
{
    for (unsigned k = 0; k < n; k++) {
        struct stream_flow *fl = &out[k];
        uint8_t id[2];
        wr32(fl->addrs, in[k].saddr);
        wr32(fl->addrs + 4, in[k].daddr);
        wr16(fl->ports, in[k].sport);
        wr16(fl->ports + 2, in[k].dport);
        fl->id = (uint16_t)in[k].stream;
        wrle16(id, fl->id);
        /* The addresses are in the IPv4 header and the UDP pseudo header
         * (RFC 768), the ports and the id in the UDP datagram. */
        fl->ip = pkt_sum(fl->addrs, 8, 0);
        fl->udp = pkt_sum(fl->ports, 4, pkt_sum(id, 2, fl->ip));
        fl->ipc = pkt_csum_fold(t->ip_base + fl->ip);
        fl->cs = (uint16_t)sum_swap(sum_mod((uint64_t)t->udp_base + fl->udp));
        fl->seq = 0;
    }
}

void stream_flow_walk_init(struct stream_flow_walk *w, const uint16_t *order, unsigned n,
                           bool random, uint64_t seed)
{
    *w = (struct stream_flow_walk){
        .order = order, .n = n, .random = random, .rng = seed * 0x9e3779b97f4a7c15ull + 1};
    if (!w->rng)
        w->rng = 1;
}
