#include "apps/stream_frame.h"

#include <errno.h>
#include <string.h>

#include "apps/stream_sum.h"
#include "net/pkt.h"

/* The stamp's magic (little endian, as wrle32 stores it) in a sum. */
static uint32_t magic_sum(void)
{
    uint8_t m[4];
    wrle32(m, PL_MAGIC);
    return pkt_sum(m, 4, 0);
}

static void wr48(uint8_t *p, uint64_t v)
{
    wr16(p, (uint16_t)(v >> 32));
    wr32(p + 2, (uint32_t)v);
}

static uint32_t sum32(uint32_t v)
{
    return (v >> 16) + (v & 0xffff);
}

/* The IP protocol number of a stream's frames (IPv4's, IPv6's next header). */
static uint8_t l4_proto(const struct stream_tmpl *t)
{
    if (t->proto == SPROTO_TCP)
        return IP_PROTO_TCP;
    if (t->proto == SPROTO_ICMP)
        return t->ip == 6 ? IP_PROTO_ICMPV6 : IP_PROTO_ICMP;
    return IP_PROTO_UDP;
}

/* The L4 checksum's offset from the L4 header (RFC 768, RFC 9293 s3.1,
 * RFC 792 / RFC 4443 s2.1). */
static uint16_t l4_csum_at(const struct stream_tmpl *t)
{
    return t->proto == SPROTO_TCP ? 16 : t->proto == SPROTO_ICMP ? 2 : 6;
}

/* Ethernet and its tags: outer first, 802.1ad outside 802.1Q (IEEE
 * 802.1Q-2018 s9.5); returns the IP header's offset. */
static uint16_t tmpl_eth(uint8_t *f, const struct stream_spec *s, const struct stream_addrs *d)
{
    memcpy(f, s->has_dmac ? s->dmac : d->dmac, 6);
    memcpy(f + 6, s->has_smac ? s->smac : d->smac, 6);
    uint16_t off = 12;
    for (unsigned i = 0; i < s->nvlan; i++) {
        wr16(f + off, s->nvlan == 2 && i == 0 ? ETH_P_8021AD : ETH_P_8021Q);
        wr16(f + off + 2, s->vlan[i]);
        off += 4;
    }
    wr16(f + off, s->ip == 6 ? ETH_P_IPV6 : ETH_P_IP);
    return (uint16_t)(off + 2);
}

/* The IP header with its length fields for len (0 when they vary). */
static void tmpl_ip(uint8_t *f, const struct stream_tmpl *t, const struct stream_spec *s,
                    const struct stream_addrs *d, uint16_t len)
{
    uint8_t *ip = f + t->l3;
    if (s->ip == 6) {
        /* RFC 8200 s3: version, traffic class, flow label. */
        wr32(ip, 6u << 28 | (uint32_t)s->tos << 20 | s->flow_label);
        wr16(ip + 4, len ? (uint16_t)(len - t->l4) : 0);
        ip[6] = l4_proto(t);
        ip[7] = s->ttl;
        memcpy(ip + 8, s->sip6, 16);
        memcpy(ip + 24, s->dip6, 16);
        return;
    }
    ip[0] = 0x45;
    ip[1] = s->tos;
    wr16(ip + 2, len ? (uint16_t)(len - t->l3) : 0);
    wr16(ip + 6, 0x4000); /* DF */
    ip[8] = s->ttl;
    ip[9] = l4_proto(t);
    wr32(ip + 12, s->sip4 ? s->sip4 : d->sip);
    wr32(ip + 16, s->dip4 ? s->dip4 : d->dip);
}

/* Sums of what stays, varying fields zeroed: IPv4 header, then the L4
 * header with its pseudo header (RFC 768, RFC 9293 s3.1; RFC 8200 s8.1
 * for IPv6); ICMPv4's has none (RFC 792). */
static void tmpl_sums(const uint8_t *f, struct stream_tmpl *t, uint16_t len)
{
    const uint8_t *ip = f + t->l3;
    uint16_t ulen = t->size_varies ? 0 : (uint16_t)(len - t->l4);
    uint32_t s = 0;
    if (t->ip == 6) {
        s = pkt_sum(ip + 8, 32, 0);
    } else {
        t->ip_base = pkt_sum(ip, IP4_HLEN, 0);
        if (t->pseudo)
            s = pkt_sum(ip + 12, 8, 0);
    }
    if (t->pseudo)
        s += l4_proto(t) + ulen;
    uint16_t end = len < t->copy ? len : t->copy;
    t->udp_base = pkt_sum(f + t->l4, (size_t)(end - t->l4), s);
}

/* The L4 header: UDP's ports and length (fixed sizes), TCP's ports, an
 * ACK|PSH segment's flags and window (RFC 9293 s3.1), an echo request's
 * type and id (the stream's; RFC 792, RFC 4443 s4.1); the sequence
 * fields are the frames'. */
static void tmpl_l4(uint8_t *f, const struct stream_tmpl *t, const struct stream_spec *s,
                    const struct stream_addrs *d, uint32_t id, uint16_t len)
{
    uint8_t *l4 = f + t->l4;
    if (t->proto == SPROTO_ICMP) {
        l4[0] = t->ip == 6 ? ICMPV6_ECHO : ICMP_ECHO;
        wr16(l4 + 4, (uint16_t)id);
        return;
    }
    wr16(l4, s->sport ? s->sport : d->sport);
    wr16(l4 + 2, s->dport ? s->dport : d->dport);
    if (t->proto == SPROTO_TCP) {
        l4[12] = TCP_HLEN / 4 << 4;
        l4[13] = 0x18; /* ACK, PSH */
        wr16(l4 + 14, 0xffff);
    } else if (!t->size_varies) {
        wr16(l4 + 4, (uint16_t)(len - t->l4));
    }
}

int stream_tmpl_build(uint8_t *f, uint16_t len, const struct stream_spec *s,
                      const struct stream_addrs *d, uint32_t id, uint32_t varies,
                      struct stream_tmpl *t)
{
    memset(t, 0, sizeof(*t));
    t->ip = s->ip;
    t->proto = s->proto;
    t->nvlan = s->nvlan;
    t->len = len;
    t->varies = varies;
    t->size_varies = s->size_range || s->sizes.n > 1;
    t->finish_more = t->size_varies || s->proto != SPROTO_UDP;
    t->pseudo = s->ip == 6 || s->proto != SPROTO_ICMP;
    memset(f, 0, len);
    t->l3 = tmpl_eth(f, s, d);
    t->l4 = (uint16_t)(t->l3 + (s->ip == 6 ? IP6_HLEN : IP4_HLEN));
    t->pl = (uint16_t)(t->l4 + (s->proto == SPROTO_TCP ? TCP_HLEN : UDP_HLEN));
    t->copy = (uint16_t)(t->pl + PL_LEN);
    if (len > PKT_MAX_FRAME || len < t->pl + stream_spec_stamp_min(s))
        return -EINVAL;
    tmpl_ip(f, t, s, d, t->size_varies ? 0 : len);
    tmpl_l4(f, t, s, d, id, len);
    /* The stream id's low 16 bits are the short stamp's; ids are below
     * STREAMS_MAX, so the long one's high bytes are 0 either way. */
    wrle32(f + t->pl + PL_OFF_STREAM, id);
    /* TCP and ICMP frames hold the whole stamp, whatever their size. */
    if ((!t->size_varies || t->proto != SPROTO_UDP) && len >= t->copy)
        wrle32(f + t->pl + PL_OFF_MAGIC, PL_MAGIC);
    for (unsigned k = 0; k < SF_FIELDS; k++)
        if (varies >> k & 1)
            stream_field_set(f, t, (enum stream_field)k, 0);
    tmpl_sums(f, t, len);
    t->magic_sum = magic_sum();
    t->ip_fixed = s->ip == 4 && !t->size_varies &&
                  !(varies & (1u << SF_SRC_IP | 1u << SF_DST_IP | 1u << SF_TOS));
    if (t->ip_fixed)
        wr16(f + t->l3 + 10, pkt_csum_fold(t->ip_base));
    if (t->size_varies) {
        /* Written per frame from here: the template is whole for its length. */
        stream_frame_finish(f, t, len, t->udp_base, t->ip_base, 0, 0);
    }
    return 0;
}

void stream_tmpl_l4_dev(struct stream_tmpl *t)
{
    t->l4_dev = true;
    t->finish_more = true;
}

void stream_field_set(uint8_t *f, const struct stream_tmpl *t, enum stream_field fld, uint64_t v)
{
    uint8_t *ip = f + t->l3;
    switch (fld) {
    case SF_DST_MAC:
        wr48(f, v);
        break;
    case SF_SRC_MAC:
        wr48(f + 6, v);
        break;
    case SF_VLAN:
        wr16(f + 14 + 4 * (t->nvlan - 1), (uint16_t)v);
        break;
    case SF_OUTER_VLAN:
        wr16(f + 14, (uint16_t)v);
        break;
    case SF_SRC_IP:
        wr32(ip + (t->ip == 6 ? 20 : 12), (uint32_t)v);
        break;
    case SF_DST_IP:
        wr32(ip + (t->ip == 6 ? 36 : 16), (uint32_t)v);
        break;
    case SF_FLOW_LABEL:
        wr32(ip, (rd32(ip) & 0xfff00000u) | (uint32_t)v);
        break;
    case SF_TOS:
        if (t->ip == 6)
            wr32(ip, (rd32(ip) & 0xf00fffffu) | (uint32_t)v << 20);
        else
            ip[1] = (uint8_t)v;
        break;
    case SF_SRC_PORT:
        wr16(f + t->l4, (uint16_t)v);
        break;
    default:
        wr16(f + t->l4 + 2, (uint16_t)v);
        break;
    }
}

void stream_field_sums(const struct stream_tmpl *t, enum stream_field fld, uint64_t v,
                       uint32_t *udp, uint32_t *ip)
{
    switch (fld) {
    case SF_SRC_IP:
    case SF_DST_IP:
        if (t->pseudo)
            *udp += sum32((uint32_t)v);
        if (t->ip == 4)
            *ip += sum32((uint32_t)v);
        break;
    case SF_SRC_PORT:
    case SF_DST_PORT:
        *udp += (uint32_t)v;
        break;
    case SF_TOS:
        if (t->ip == 4)
            *ip += (uint32_t)v; /* the low byte of the header's first word */
        break;
    default:
        break; /* MACs, tags and the flow label are in no checksum */
    }
}

static void fe_place(struct stream_fe *fe, unsigned off, uint8_t nbytes, uint8_t sums)
{
    fe->off = (uint16_t)off;
    fe->nbytes = nbytes;
    fe->sums = sums;
}

/* The walk's end and what its steps add to a sum (stream_fast): a field
 * of whole bytes adds its value modulo 0xffff, whatever its width. */
static void fe_deltas(struct stream_fe *fe, const struct stream_var *v)
{
    fe->last = fe->dstep = fe->dwrap = 0;
    if (v->op == SOP_RANDOM || !v->step)
        return; /* a draw: no walk (the parser takes steps of 1 and more) */
    uint64_t span = (v->hi - v->lo) / v->step * v->step;
    bool dec = v->op == SOP_DEC;
    uint64_t start = dec ? v->hi : v->lo;
    fe->last = dec ? v->hi - span : v->lo + span;
    fe->dstep = sum_swap(dec ? sum_neg(sum_mod(v->step)) : sum_mod(v->step));
    fe->dwrap = sum_swap(sum_add(sum_mod(start), sum_neg(sum_mod(fe->last))));
}

void stream_fe_init(struct stream_fe *fe, const struct stream_var *v, const struct stream_tmpl *t)
{
    bool v6 = t->ip == 6;
    /* An address is in the L4 sum's pseudo header and in IPv4's header. */
    uint8_t in_addr = (uint8_t)((t->pseudo ? 1 : 0) | (v6 ? 0 : 2));
    fe->v = *v;
    fe->cur = v->op == SOP_DEC ? v->hi : v->lo;
    fe_deltas(fe, v);
    /* The flow label's 20 bits and IPv6's traffic class are not whole
     * bytes: stream_field_set writes them. */
    fe->generic = v->field == SF_FLOW_LABEL || (v6 && v->field == SF_TOS);
    switch (v->field) {
    case SF_DST_MAC:
        fe_place(fe, 0, 6, 0);
        break;
    case SF_SRC_MAC:
        fe_place(fe, 6, 6, 0);
        break;
    case SF_VLAN:
        fe_place(fe, 14 + 4 * (t->nvlan - 1u), 2, 0);
        break;
    case SF_OUTER_VLAN:
        fe_place(fe, 14, 2, 0);
        break;
    case SF_SRC_IP:
        fe_place(fe, t->l3 + (v6 ? 20u : 12u), 4, in_addr);
        break;
    case SF_DST_IP:
        fe_place(fe, t->l3 + (v6 ? 36u : 16u), 4, in_addr);
        break;
    case SF_TOS:
        fe_place(fe, t->l3 + 1u, 1, 2);
        break;
    case SF_SRC_PORT:
        fe_place(fe, t->l4, 2, 1);
        break;
    case SF_DST_PORT:
        fe_place(fe, t->l4 + 2u, 2, 1);
        break;
    default:
        fe_place(fe, 0, 0, 0);
        break;
    }
}

void stream_frame_finish_l4(uint8_t *f, const struct stream_tmpl *t, uint16_t len, uint32_t sum,
                            uint32_t ip, uint64_t seq, uint64_t tsc)
{
    uint8_t *l3 = f + t->l3, *l4 = f + t->l4;
    if (t->size_varies) {
        uint16_t l4len = (uint16_t)(len - t->l4);
        if (t->pseudo)
            sum += l4len;
        if (t->ip == 6) {
            wr16(l3 + 4, l4len);
        } else {
            wr16(l3 + 2, (uint16_t)(len - t->l3));
            ip += (uint32_t)(len - t->l3);
        }
    }
    if (t->proto == SPROTO_TCP) {
        wr32(l4 + 4, (uint32_t)seq);
        sum += sum32((uint32_t)seq);
    } else {
        wr16(l4 + 6, (uint16_t)seq);
        sum += (uint16_t)seq;
    }
    wrle64(f + t->pl + PL_OFF_SEQ, seq);
    wrle64(f + t->pl + PL_OFF_TSC, tsc);
    /* A computed 0 goes as 0: neither TCP nor ICMP reads it as "none". */
    wr16(l4 + l4_csum_at(t), pkt_csum_fold(pkt_sum_add_le64(sum, seq)));
    if (t->ip == 4 && !t->ip_fixed)
        wr16(l3 + 10, pkt_csum_fold(ip));
}
