/* Received frames sent on without a copy, the loop reflect and fwd share:
 * one RX burst from a device, each frame judged by the app (edited in
 * place and sent, handed to lwIP, or given back), the frames to send
 * queued on a device's TX with their RX buffer as the cookie (net.h: the
 * buffer goes back to the device it came from in tx_done), and those the
 * TX ring did not take given back at once. */
#ifndef VN_RELAY_H
#define VN_RELAY_H

#include <stdint.h>

#include "net/net.h"

enum relay_verdict {
    RELAY_SEND, /* queue it on out as it now is */
    RELAY_LWIP, /* net_input: ARP, ICMP, what is ours */
    RELAY_DROP, /* give the buffer back (counted by the judge) */
};

/* Decides a received frame's fate, and may rewrite it in place. */
typedef enum relay_verdict (*relay_judge_fn)(void *ctx, const struct vnet_rx *rx);

struct relay_burst {
    int received;   /* frames taken from in's RX */
    int queued;     /* judged RELAY_SEND */
    int sent;       /* of those, taken by out's TX ring; the rest given back */
    uint64_t bytes; /* of the frames sent */
};

/* The judged frames of rx[0..n) from in: those to send in tx (their
 * buffers in bufs), the rest handed to lwIP or given back. Returns how
 * many are to be sent. */
static inline int relay_judge_all(struct net_if *in, struct vnet_rx *rx, int n,
                                  relay_judge_fn judge, void *ctx, struct vnet_tx *tx,
                                  uint32_t *bufs)
{
    int nt = 0;
    for (int i = 0; i < n; i++) {
        switch (judge(ctx, &rx[i])) {
        case RELAY_SEND:
            bufs[nt] = rx[i].buf;
            tx[nt++] = (struct vnet_tx){
                .frame = rx[i].frame, .len = rx[i].len, .cookie = net_cookie_rx(in, rx[i].buf)};
            break;
        case RELAY_LWIP:
            net_input(in, &rx[i]);
            break;
        case RELAY_DROP:
            vnet_rx_release(net_if_dev(in), rx[i].buf);
            break;
        }
    }
    return nt;
}

/* q frames of tx[0..nt) went; the rest given back, the burst summed. */
static inline void relay_done(struct net_if *in, const struct vnet_tx *tx, const uint32_t *bufs,
                              int n, int nt, int q, struct relay_burst *b)
{
    uint64_t bytes = 0;
    for (int i = 0; i < q; i++)
        bytes += tx[i].len;
    for (int i = q; i < nt; i++)
        vnet_rx_release(net_if_dev(in), bufs[i]);
    *b = (struct relay_burst){.received = n, .queued = nt, .sent = q, .bytes = bytes};
}

/* One burst from in's pair p to out's pair p (the same device for
 * reflect), so the CPU that owns pair p touches no other pair. Inline so
 * the judge, a constant at each call, is inlined into the loop. */
static inline void relay_burst_q(struct net_if *in, struct net_if *out, unsigned p,
                                 relay_judge_fn judge, void *ctx, struct relay_burst *b)
{
    struct vnet_rx rx[NET_RX_BATCH];
    struct vnet_tx tx[NET_RX_BATCH];
    uint32_t bufs[NET_RX_BATCH];
    int n = net_check(in, vnet_rx_burst_q(net_if_dev(in), p, rx, NET_RX_BATCH)), q = 0;
    int nt = relay_judge_all(in, rx, n < 0 ? 0 : n, judge, ctx, tx, bufs);
    if (nt)
        q = net_check(out, vnet_tx_burst_q(net_if_dev(out), p, tx, nt));
    relay_done(in, tx, bufs, n < 0 ? 0 : n, nt, q < 0 ? 0 : q, b);
}

#endif
