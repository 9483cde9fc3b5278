#include "apps/rr_req.h"

#include <string.h>

#include "kernel/csum.h"

uint32_t rr_req_build(uint8_t *f, uint32_t max, const struct rr_req_flow *fl, uint32_t req)
{
    uint32_t len = PKT_HDRS_LEN + req;
    uint32_t frame = len < PKT_MIN_FRAME ? PKT_MIN_FRAME : len;
    if (req > 0xffff - IP4_HLEN - UDP_HLEN || frame > max)
        return 0;
    memset(f, 0, frame);
    memcpy(f + OFF_ETH_DST, fl->dst_mac, ETH_ALEN);
    memcpy(f + OFF_ETH_SRC, fl->src_mac, ETH_ALEN);
    wr16(f + OFF_ETH_TYPE, 0x0800);
    uint8_t *ip = f + OFF_IP;
    ip[0] = 0x45;
    wr16(f + OFF_IP_LEN, (uint16_t)(len - ETH_HLEN));
    wr16(ip + 6, 0x4000); /* DF */
    ip[8] = 64;
    ip[9] = 17; /* UDP */
    wr32(f + OFF_IP_SRC, fl->saddr);
    wr32(f + OFF_IP_DST, fl->daddr);
    /* a native sum stored natively has the network-order bytes (csum.h) */
    uint16_t c = (uint16_t)~csum_fold16(csum_partial(ip, IP4_HLEN, 0));
    memcpy(f + OFF_IP_CSUM, &c, sizeof(c));
    wr16(f + OFF_UDP_SPORT, fl->sport);
    wr16(f + OFF_UDP_DPORT, fl->dport);
    wr16(f + OFF_UDP_LEN, (uint16_t)(UDP_HLEN + req));
    return frame;
}

uint32_t rr_req_id_len(uint32_t req, uint32_t resp)
{
    uint32_t n = req < resp ? req : resp;
    return n < RR_REQ_ID_MAX ? n : RR_REQ_ID_MAX;
}

void rr_req_set_id(uint8_t *f, uint64_t id, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        f[OFF_PAYLOAD + i] = (uint8_t)(id >> (8 * i));
}

uint64_t rr_req_budget(uint64_t count, unsigned n, unsigned i)
{
    if (!n || i >= n)
        return 0;
    return count / n + (i < count % n);
}

void rr_req_classify(const uint8_t *f, const struct pkt_info *pi, uint32_t server, uint16_t port,
                     uint16_t base, unsigned n, uint32_t resp, uint32_t id_len,
                     struct rr_req_answer *a)
{
    *a = (struct rr_req_answer){.session = -1};
    if (pi->saddr != server || pi->sport != port || pi->dport < base ||
        (unsigned)(pi->dport - base) >= n)
        return;
    a->session = (int)(pi->dport - base);
    a->whole = pi->payload_len == resp;
    uint32_t k = pi->payload_len < id_len ? pi->payload_len : id_len;
    for (uint32_t i = 0; i < k; i++)
        a->id |= (uint64_t)f[pi->payload_off + i] << (8 * i);
}
