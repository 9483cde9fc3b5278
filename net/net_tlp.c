/* A tail-loss probe for lwIP's TCP sender (RFC 8985 s7), from the port.
 *
 * lwIP retransmits before its timeout only at the third duplicate ACK
 * (lwIP 2.1.3 src/core/tcp_in.c, tcp_receive: tcp_rexmit_fast). When the
 * last segments of a flight are lost, or passt writes part of a segment
 * into its socket, ACKs that part, drops what follows and sends two
 * duplicate ACKs, the stream waits for the retransmit timeout (about
 * 0.3 s, lwipopts.h). Here, once a connection with data in flight has
 * seen no progress for PTO, it sends one probe per episode; an episode
 * ends when the cumulative ACK moves. When the probe's ACK shows the rest
 * of the flight lost too (passt drops all of it), lwIP resends that
 * flight at once (tlp_probe_acked).
 *
 * PTO (RFC 8985 s7.2) is 2 * SRTT, plus NET_TLP_DELACK_NS when one
 * segment is in flight (its ACK may be delayed), at least NET_TLP_MIN_NS.
 * SRTT is measured here (RFC 6298 s2, Karn's rule of s3): lwIP keeps it
 * in slow-timer ticks of 100 ms (tcp_in.c, pcb->sa), which on a sub-tick
 * round trip reads 0 or 1 tick. The probe is not sent when lwIP's own
 * retransmit timeout may come first: rtime and rto count whole ticks, so
 * the timeout must still be at least a full tick away (tcp.c,
 * tcp_slowtmr). */
#include "kernel/time.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"
#include "net/net_priv.h"

#define NET_TLP_MIN_NS    10000000ull /* the probe's earliest: our loop and timer granularity */
#define NET_TLP_DELACK_NS 40000000ull /* Linux's shortest delayed ACK (TCP_DELACK_MIN) */

_Static_assert(LWIP_TCP_PCB_NUM_EXT_ARGS >= 1, "net_tlp keeps its state in a pcb ext arg");

/* One connection's probe state, found through its pcb's ext arg. */
struct net_tlp {
    bool used, timing, probed;
    bool probe_out;  /* the probe's ACK has not come */
    bool lost;       /* the probe's ACK says the flight is lost: resend it */
    u32_t una, nxt;  /* pcb->lastack and snd_nxt last seen */
    u32_t probe_end; /* probe_out: the probed segment's end */
    u32_t high;      /* probe_out: snd_nxt before the probe */
    u32_t rt_seq;    /* timing: the round trip ends when this is ACKed */
    uint64_t rt_at;  /* timing: when rt_seq was seen sent (TSC) */
    uint64_t srtt;   /* TSC cycles; 0: no sample yet */
    uint64_t since;  /* the last progress (TSC): ACKed or sent */
    uint32_t probes; /* probes sent on this connection */
};

static struct net_tlp slots[MEMP_NUM_TCP_PCB]; /* at most one per pcb */
static u8_t ext_id = LWIP_TCP_PCB_NUM_EXT_ARG_ID_INVALID;
static uint64_t due_at;              /* TSC: the earliest probe due; 0: none */
static uint64_t total;               /* probes, all connections */
static uint64_t resends;             /* flights resent on a probe's ACK */
static uint64_t min_cyc, delack_cyc; /* the constants above in TSC cycles */

static void tlp_destroyed(u8_t id, void *data)
{
    (void)id;
    ((struct net_tlp *)data)->used = false;
}

static const struct tcp_ext_arg_callbacks tlp_callbacks = {tlp_destroyed, NULL};

void net_tlp_init(void)
{
    ext_id = tcp_ext_arg_alloc_id();
    min_cyc = time_ns_to_cycles(NET_TLP_MIN_NS);
    delack_cyc = time_ns_to_cycles(NET_TLP_DELACK_NS);
}

/* The pcb's state, attached on first sight; NULL before net_tlp_init or
 * with every slot taken (cannot happen: as many slots as pcbs, each freed
 * with its pcb). */
static struct net_tlp *tlp_of(struct tcp_pcb *pcb, uint64_t now)
{
    if (ext_id == LWIP_TCP_PCB_NUM_EXT_ARG_ID_INVALID)
        return NULL;
    struct net_tlp *t = tcp_ext_arg_get(pcb, ext_id);
    if (t)
        return t;
    for (unsigned i = 0; i < MEMP_NUM_TCP_PCB; i++)
        if (!slots[i].used) {
            t = &slots[i];
            /* What is in flight now (a SYN) is timed from now. */
            *t = (struct net_tlp){.used = true,
                                  .timing = TCP_SEQ_GT(pcb->snd_nxt, pcb->lastack),
                                  .una = pcb->lastack,
                                  .nxt = pcb->snd_nxt,
                                  .rt_seq = pcb->snd_nxt,
                                  .rt_at = now,
                                  .since = now};
            tcp_ext_arg_set(pcb, ext_id, t);
            tcp_ext_arg_set_callbacks(pcb, ext_id, &tlp_callbacks);
            return t;
        }
    return NULL;
}

static bool tlp_recovering(const struct tcp_pcb *pcb)
{
    return (pcb->flags & (TF_INFR | TF_RTO)) != 0;
}

/* RFC 8985 s7.4.1: the ACK of the probe drives RACK (s6.2), which deems
 * lost what was sent before a segment that was delivered. lwIP's only
 * delivery signal is the cumulative ACK: when it covers the probed
 * segment but stops short of what was sent before the probe, the rest of
 * that flight is lost. passt drops everything after a hole, so one probe
 * per hole would move one segment per PTO; lwIP resends the whole flight
 * at once (tcp_out.c, tcp_rexmit_rto: what its timeout does, without the
 * wait), and the window is halved as lwIP's fast retransmit does
 * (tcp_rexmit_fast; RFC 5681 s3.2), the loss being certain now. */
static void tlp_probe_acked(struct net_tlp *t, const struct tcp_pcb *pcb)
{
    t->probe_out = false;
    t->lost = TCP_SEQ_GEQ(pcb->lastack, t->probe_end) && TCP_SEQ_LT(pcb->lastack, t->high);
}

/* Resends the lost flight once no segment of it is still with the device
 * (tcp_rexmit_rto_prepare refuses then): true when nothing is left to do. */
static bool tlp_resend(struct net_tlp *t, struct tcp_pcb *pcb)
{
    if (!pcb->unacked || tlp_recovering(pcb) || !TCP_SEQ_LT(pcb->lastack, t->high)) {
        t->lost = false;
        return true;
    }
    if (tcp_rexmit_rto_prepare(pcb) != ERR_OK)
        return false;
    tcpwnd_size_t half = LWIP_MIN(pcb->cwnd, pcb->snd_wnd) / 2;
    pcb->ssthresh = LWIP_MAX(half, (tcpwnd_size_t)(2 * pcb->mss));
    pcb->cwnd = pcb->ssthresh;
    tcp_rexmit_rto_commit(pcb);
    resends++;
    t->lost = false;
    return true;
}

/* What the pcb did since the last round: the round trip being timed
 * ends, the episode ends when the cumulative ACK moves, and progress
 * either way restarts the PTO. */
static void tlp_observe(struct net_tlp *t, struct tcp_pcb *pcb, uint64_t now)
{
    if (tlp_recovering(pcb))
        t->timing = false; /* Karn: the ACK may be for a retransmission */
    if (t->timing && TCP_SEQ_GEQ(pcb->lastack, t->rt_seq)) {
        uint64_t r = now - t->rt_at;
        t->srtt = t->srtt ? t->srtt - t->srtt / 8 + r / 8 : r; /* RFC 6298 s2.3 */
        t->timing = false;
    }
    if (TCP_SEQ_GT(pcb->lastack, t->una)) {
        t->una = pcb->lastack;
        t->probed = false;
        t->since = now;
        if (t->probe_out)
            tlp_probe_acked(t, pcb);
    }
    if (TCP_SEQ_GT(pcb->snd_nxt, t->nxt)) {
        t->nxt = pcb->snd_nxt;
        t->since = now;
        if (!t->timing && !t->probed && !tlp_recovering(pcb)) {
            t->timing = true;
            t->rt_seq = pcb->snd_nxt;
            t->rt_at = now;
        }
    }
}

/* When this pcb's probe is due (TSC), 0: none in this episode. */
static uint64_t tlp_due(const struct net_tlp *t, const struct tcp_pcb *pcb)
{
    if (t->probed || !t->srtt || !pcb->unacked || pcb->state < ESTABLISHED || tlp_recovering(pcb) ||
        pcb->snd_wnd == 0)
        return 0;
    /* lwIP's timeout comes at the slow tick where rtime reaches rto. */
    if (pcb->rtime < 0 || pcb->rto - pcb->rtime < 2)
        return 0;
    uint64_t pto = 2 * t->srtt + (pcb->unacked->next ? 0 : delack_cyc);
    return t->since + (pto > min_cyc ? pto : min_cyc);
}

/* The probe retransmits the first unacknowledged segment, not new data
 * or the last segment as RFC 8985 s7.3 does. Those serve a SACK
 * scoreboard (RACK, s6.2), which lwIP lacks: it learns only from the
 * cumulative ACK. And passt keeps no out-of-order data and answers it
 * with duplicate ACKs once per sequence number (passt tcp.c,
 * tcp_data_from_tap: seq_dup_ack_approx), so new data or the last
 * segment would draw no third duplicate ACK, nor any ACK at all; that
 * third duplicate ACK would only make lwIP resend this same segment
 * (tcp_rexmit_fast). A receiver holding what follows (Linux over tap)
 * then ACKs all of it; passt writes the segment and ACKs it.
 * The window stays: without DSACK lwIP cannot tell a probe that repaired
 * a loss from one whose original arrived (RFC 8985 s7.4.2), and passt
 * ACKs only what its host socket's peer has (tcp_update_seqack_wnd), so
 * there a quiet PTO is mostly a late ACK. A loss the probe did not repair
 * meets lwIP's fast retransmit or timeout, which reduce it. Nagle holds
 * back no retransmission (RFC 1122 s4.2.3.4 is about new data). */
static bool tlp_probe(struct net_tlp *t, struct tcp_pcb *pcb)
{
    const struct tcp_seg *seg = pcb->unacked;
    u32_t end = lwip_ntohl(seg->tcphdr->seqno) + TCP_TCPLEN(seg), high = pcb->snd_nxt;
    if (tcp_rexmit(pcb) != ERR_OK)
        return false; /* the segment is still with the device: next round */
    t->probe_out = true;
    t->probe_end = end;
    t->high = high;
    bool nodelay = tcp_nagle_disabled(pcb);
    tcp_nagle_disable(pcb);
    tcp_output(pcb);
    if (!nodelay)
        tcp_nagle_enable(pcb);
    return true;
}

void net_tlp_service(void)
{
    uint64_t now = time_cycles(), next = 0;
    for (struct tcp_pcb *pcb = tcp_active_pcbs; pcb; pcb = pcb->next) {
        struct net_tlp *t = tlp_of(pcb, now);
        if (!t)
            continue;
        tlp_observe(t, pcb, now);
        if (t->lost && !tlp_resend(t, pcb)) {
            next = now; /* again next round, no probe meanwhile */
            continue;
        }
        uint64_t due = tlp_due(t, pcb);
        if (due && now >= due && tlp_probe(t, pcb)) {
            t->probed = true;
            t->timing = false;
            t->probes++;
            total++;
            due = 0;
        }
        if (due && (!next || due < next))
            next = due;
    }
    due_at = next;
}

uint64_t net_tlp_deadline(void)
{
    return due_at;
}

uint32_t net_tlp_probes(const struct tcp_pcb *pcb)
{
    if (ext_id == LWIP_TCP_PCB_NUM_EXT_ARG_ID_INVALID)
        return 0;
    const struct net_tlp *t = tcp_ext_arg_get(pcb, ext_id);
    return t ? t->probes : 0;
}

uint64_t net_tlp_total(void)
{
    return total;
}

uint64_t net_tlp_resends(void)
{
    return resends;
}
