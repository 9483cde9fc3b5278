/* app=iperf role=client: sessions= parallel iperf 2 streams on lwIP's raw
 * API. lwiperf's own client (lwIP 2.1.3) always runs 10 s and writes one
 * MSS at a time, so this one is written here: msg_size= bytes per
 * tcp_write (netperf -m), by reference into a constant zero buffer. */
#include <stdio.h>
#include <stdlib.h>

#include "apps/iperf.h"
#include "kernel/exit.h"
#include "kernel/time.h"
#include "lwip/tcp.h"
#include "net/net.h"

_Static_assert(IPERF_ZBUF >= 2 * 65535, "a write of the largest msg_size fits after any offset");

#define IPERF_RETRY_NS 200000000ull /* a refused connect is tried again */

static void client_push(struct iperf_sess *s)
{
    struct tcp_pcb *pcb = s->pcb;
    if (!pcb || !s->connected || iperf_state.stop)
        return;
    /* Like a blocking send of msg_size bytes: wait until all of it fits.
     * The queue limit leaves room for lwIP's own segments (FIN). Writes
     * do not move the peer's window: its limit holds for the whole loop. */
    uint64_t limit = iperf_sess_limit(s->cap, net_tcp_peer_wnd(pcb), iperf_state.msg);
    while (tcp_sndbuf(pcb) >= iperf_state.msg && tcp_sndqueuelen(pcb) + 4 < TCP_SND_QUEUELEN &&
           s->written - s->bytes + iperf_state.msg <= limit) {
        if (tcp_write(pcb, iperf_state.zbuf + s->zoff, (u16_t)iperf_state.msg,
                      TCP_WRITE_FLAG_MORE) != ERR_OK)
            break; /* out of segments or pbufs: the next ACK frees some */
        s->written += iperf_state.msg;
        s->zoff += iperf_state.msg;
        if (s->zoff + iperf_state.msg > IPERF_ZBUF)
            s->zoff = 0;
    }
    tcp_output(pcb);
}

static err_t client_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    struct iperf_sess *s = arg;
    s->bytes += len;
    s->rto_ms = net_tcp_rto_ms(pcb);
    s->probes = net_tlp_probes(pcb);
    s->t_end = time_cycles();
    client_push(s);
    return ERR_OK;
}

static void client_err(void *arg, err_t err)
{
    struct iperf_sess *s = arg;
    s->pcb = NULL; /* lwIP has freed it */
    if (!s->connected) {
        s->retry_at = time_cycles() + time_ns_to_cycles(IPERF_RETRY_NS);
        return;
    }
    s->connected = false;
    if (!s->done) {
        s->failed = true;
        printf("iperf: session %u lost (lwIP err %d)\n", s->idx, err);
    }
}

static err_t client_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct iperf_sess *s = arg;
    (void)err;
    if (p) {
        /* iperf 2 sends nothing back on a plain stream; ignore. */
        tcp_recved(pcb, p->tot_len);
        pbuf_free(p);
        return ERR_OK;
    }
    /* The host closed: before our stop that is a failure; after it, the
     * end of a stream we closed ourselves. */
    if (!iperf_state.stop)
        s->failed = true;
    s->done = true;
    return ERR_OK;
}

/* lwIP's segments and payload pbufs come from pools all sessions share
 * (MEMP_NUM_TCP_SEG, MEMP_NUM_PBUF), and tcp_write fails for whoever finds
 * them empty: without a share each, the first sessions would keep them
 * and a late one never send. Half the pool, a segment (and its payload
 * pbuf) per MSS, split evenly; the send buffer caps it too, one write
 * is the least. */
static uint64_t client_cap(const struct tcp_pcb *pcb)
{
    uint64_t share = (uint64_t)(MEMP_NUM_TCP_SEG / 2) * tcp_mss(pcb) / iperf_state.n;
    if (share > TCP_SND_BUF)
        share = TCP_SND_BUF;
    return share > iperf_state.msg ? share
                                   : iperf_state.msg; /* a write always fits an empty queue */
}

static err_t client_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct iperf_sess *s = arg;
    if (err != ERR_OK)
        return err;
    s->connected = true;
    s->lport = pcb->local_port;
    s->t_start = s->t_end = time_cycles();
    net_tcp_offload(pcb);
    s->cap = client_cap(pcb);
    /* The first write waits for the app's next poll, so that lwIP
     * acknowledges the SYN-ACK with a bare ACK after this callback: passt
     * drops the data of a segment that completes its handshake (bookworm's
     * 0.0~git20230309 for good; trixie's 0.0~git20250503 still costs the
     * stream a ~1.2 s retransmit, docs/lwip.md). */
    return ERR_OK;
}

/* s's pcb taken from it: every callback cleared first (tcp_abort calls
 * the error one; a pcb lwIP keeps after this must not reach s, which the
 * next run may reuse), then aborted: a CLOSED pcb (a connect that failed
 * or never completed) is freed without a reset (lwIP 2.1 tcp_abandon). */
static void client_cut(struct iperf_sess *s)
{
    tcp_arg(s->pcb, NULL);
    tcp_sent(s->pcb, NULL);
    tcp_recv(s->pcb, NULL);
    tcp_err(s->pcb, NULL);
    tcp_abort(s->pcb);
    s->pcb = NULL;
}

static void client_connect(struct iperf_sess *s)
{
    s->retry_at = 0;
    s->pcb = tcp_new_ip_type(IP_GET_TYPE(&iperf_state.dst));
    if (!s->pcb)
        vn_fatal(VN_EXIT_OOM, "iperf: no TCP PCB for session %u", s->idx);
    tcp_arg(s->pcb, s);
    tcp_sent(s->pcb, client_sent);
    tcp_err(s->pcb, client_err);
    tcp_recv(s->pcb, client_recv);
    err_t e = tcp_connect(s->pcb, &iperf_state.dst, iperf_state.port, client_connected);
    s->connect_err = e;
    if (e == ERR_OK)
        return;
    /* No SYN segment (ERR_MEM: lwIP's pools held by frames not yet sent
     * or freed), no route or no port for now:
     * lwIP keeps the closed pcb, freed here; tried again as a refused
     * connect is, within IPERF_CONNECT_S (lwIP 2.1 tcp.c, tcp_connect). */
    client_cut(s);
    s->retry_at = time_cycles() + time_ns_to_cycles(IPERF_RETRY_NS);
}

void iperf_client_start(void)
{
    /* Zeros that never change: lwIP references them until acknowledged;
     * one buffer for every run of the boot. */
    if (!iperf_state.zbuf) {
        uint8_t *z = calloc(1, IPERF_ZBUF);
        if (!z)
            vn_fatal(VN_EXIT_OOM, "iperf: no memory for the %d KiB payload", IPERF_ZBUF / 1024);
        iperf_state.zbuf = z;
    }
    for (unsigned i = 0; i < iperf_state.n; i++) {
        iperf_state.s[i].idx = i;
        client_connect(&iperf_state.s[i]);
    }
}

static void client_poll(uint64_t now, uint64_t connect_end)
{
    for (unsigned i = 0; i < iperf_state.n; i++) {
        struct iperf_sess *s = &iperf_state.s[i];
        if (!s->connected && !s->failed && s->retry_at && now >= s->retry_at) {
            if (now >= connect_end && s->connect_err)
                vn_fatal(VN_EXIT_NETWORK,
                         "iperf: tcp_connect failed for session %u for %d s: "
                         "lwIP error %d",
                         s->idx, IPERF_CONNECT_S, s->connect_err);
            if (now >= connect_end)
                vn_fatal(VN_EXIT_NETWORK, "iperf: TCP connect to port %u refused for %d s",
                         iperf_state.port, IPERF_CONNECT_S);
            client_connect(s);
        }
        client_push(s);
    }
}

static bool client_retrying(void)
{
    for (unsigned i = 0; i < iperf_state.n; i++)
        if (iperf_state.s[i].retry_at)
            return true;
    return false;
}

unsigned iperf_client_failed(void)
{
    unsigned n = 0;
    for (unsigned i = 0; i < iperf_state.n; i++)
        n += iperf_state.s[i].failed;
    return n;
}

unsigned iperf_client_round(uint64_t now, uint64_t connect_end, uint64_t wake)
{
    unsigned got = net_poll();
    client_poll(now, connect_end);
    unsigned failed = iperf_client_failed();
    /* an empty ring: halt (notify=irq|hybrid) until a frame (the ACKs
     * that let the client write), lwIP's next timer or wake; not while a
     * refused connect waits for its retry (a timer, not a frame) */
    if (got == 0 && failed < iperf_state.n && !client_retrying())
        net_idle(wake);
    return failed;
}

/* Stop writing and close: the FIN goes after what is queued, and the
 * callbacks stay so the acknowledgements of that data still count (the
 * host's byte count includes it). */
void iperf_client_stop(void)
{
    iperf_state.stop = true;
    for (unsigned i = 0; i < iperf_state.n; i++) {
        struct iperf_sess *s = &iperf_state.s[i];
        if (!s->pcb)
            continue;
        if (!s->connected) {
            client_cut(s); /* a connect still in progress */
            continue;
        }
        if (tcp_close(s->pcb) != ERR_OK) {
            s->failed = true;
            tcp_abort(s->pcb);
            s->pcb = NULL;
        }
    }
}

bool iperf_client_draining(void)
{
    for (unsigned i = 0; i < iperf_state.n; i++) {
        const struct iperf_sess *s = &iperf_state.s[i];
        if (s->pcb && s->connected && !s->failed && s->bytes < s->written)
            return true;
    }
    return false;
}

void iperf_client_count(unsigned i, struct iperf_client_count *out)
{
    const struct iperf_sess *s = &iperf_state.s[i];
    out->bytes = s->bytes;
    out->ns = iperf_sess_ns(s);
    out->unacked = iperf_sess_unacked(s);
    out->lport = s->lport;
    out->ok = iperf_sess_ok(s);
}

bool iperf_client_closing(void)
{
    for (unsigned i = 0; i < iperf_state.n; i++)
        if (iperf_state.s[i].pcb && !iperf_state.s[i].done)
            return true;
    return false;
}

/* A session the host has closed too calls back no more: lwIP keeps its
 * pcb in TIME_WAIT or LAST_ACK, and after tcp_close (TF_RXCLOSED) reports
 * neither end to the app (lwIP 2.1 tcp_in.c). One the host has not closed
 * is still lwIP's, alive (FIN_WAIT_1/2): cut loose and aborted, its late
 * callbacks would write into a session reused by the next run. */
void iperf_client_release(void)
{
    for (unsigned i = 0; i < iperf_state.n; i++) {
        struct iperf_sess *s = &iperf_state.s[i];
        if (s->pcb && !s->done)
            client_cut(s);
        s->pcb = NULL;
    }
}
