/* TCP on top of the device's segmentation offload (docs/lwip.md).
 *
 * lwIP cuts its send queue into segments of at most pcb->mss bytes
 * (tcp_write, lwIP 2.1.3 src/core/tcp_out.c, mss_local) and has no notion
 * of a device that segments: no option or hook separates "the MSS on the
 * wire" from "the most a segment may carry". The MSS on the wire is only
 * ever used by the sender to size segments, so once a connection is up
 * we raise its pcb->mss to whole multiples of the real one that still
 * fit a packet of its family, and the netif hands each large segment to
 * the device with gso_size = the real MSS (net_netif_offloads; IPv6:
 * netif_ip6.c).
 *
 * lwIP's congestion window is in bytes and tcp_output sends a segment
 * only when all of it fits (tcp_out.c, tcp_output: seg->len <= wnd); it
 * set the initial window from the real MSS at the handshake (tcp_in.c,
 * tcp_process: LWIP_TCP_CALC_INITIAL_CWND, at most 4 * 1460 bytes), below
 * one large segment, so nothing would ever be sent. The window starts at
 * one large segment instead; after a timeout lwIP itself restarts it at
 * one MSS (tcp.c, tcp_slowtmr), which is then the large one. */
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"
#include "net/net.h"
#include "net/net_off.h"

void net_tcp_offload(struct tcp_pcb *pcb)
{
    const struct net_if *nif = net_if_get(0); /* lwIP lives on the first device */
    if (!nif)
        return;
    uint16_t mss = net_off_send_mss(net_if_tso(nif, IP_IS_V6_VAL(pcb->remote_ip)), pcb->mss);
    if (mss == pcb->mss)
        return;
    pcb->mss = mss;
    if (pcb->cwnd < pcb->mss)
        pcb->cwnd = pcb->mss;
}

uint32_t net_tcp_rto_ms(const struct tcp_pcb *pcb)
{
    /* lwIP keeps it in slow-timer ticks (tcp_priv.h, TCP_SLOW_INTERVAL). */
    return pcb->rto > 0 ? (uint32_t)pcb->rto * TCP_SLOW_INTERVAL : 0;
}

uint32_t net_tcp_peer_wnd(const struct tcp_pcb *pcb)
{
    return pcb->snd_wnd; /* scaled already (tcp_in.c, tcp_receive) */
}

/* A receive window below TCP_WND (net_rwnd.h; why: docs/lwip.md). lwIP
 * gives a connection TCP_WND once window scaling is agreed (tcp_in.c,
 * tcp_parseopt) and tcp_recved gives credit back up to it (tcp.c); it
 * has no window per pcb. Credit kept back shrinks the window as data
 * arrives; lwIP never moves an announced right edge back (tcp.c,
 * tcp_update_rcv_ann_wnd), so nothing it offered is taken away. */
void net_tcp_rwnd_start(const struct tcp_pcb *pcb, struct net_rwnd *w, uint32_t window)
{
    net_rwnd_init(w, TCP_WND_MAX(pcb), window);
}

void net_tcp_recved(struct tcp_pcb *pcb, struct net_rwnd *w, uint16_t len)
{
    uint16_t give = net_rwnd_consume(w, len);
    if (give)
        tcp_recved(pcb, give);
}

/* Before tcp_close, which resets a connection whose window is not whole
 * ("not all data received by application": tcp.c, tcp_close_shutdown).
 * Given back in one step, without tcp_recved's window update per 64 KiB
 * (it takes 16 bits): the stream is closing. */
void net_tcp_rwnd_end(struct tcp_pcb *pcb, struct net_rwnd *w)
{
    uint32_t back = net_rwnd_release(w);
    tcpwnd_size_t room = TCP_WND_MAX(pcb) - pcb->rcv_wnd;
    pcb->rcv_wnd += back < room ? back : room;
}
