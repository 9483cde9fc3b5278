/* A stream's receive window below lwIP's TCP_WND (iperf -w, netperf -S),
 * as credit the app keeps back from tcp_recved (net_tcp.c), without lwIP
 * so that the arithmetic is host-testable (tests/unit/test_net_rwnd.c).
 * Inline: net_rwnd_consume runs for every received segment. */
#ifndef VN_NET_RWND_H
#define VN_NET_RWND_H

#include <stdint.h>

struct net_rwnd {
    uint32_t hold; /* window still to keep back from the data received */
    uint32_t held; /* kept back so far: given back before the close */
};

/* Keeps back max - window (nothing when window >= max). */
static inline void net_rwnd_init(struct net_rwnd *w, uint32_t max, uint32_t window)
{
    w->hold = window < max ? max - window : 0;
    w->held = 0;
}

/* Of len bytes the app consumed, what to give back to lwIP now. */
static inline uint16_t net_rwnd_consume(struct net_rwnd *w, uint16_t len)
{
    uint32_t keep = len < w->hold ? len : w->hold;
    w->hold -= keep;
    w->held += keep; /* held + hold never exceeds the max it started from */
    return (uint16_t)(len - keep);
}

/* All that was kept back, to give back at the close; 0 after. */
static inline uint32_t net_rwnd_release(struct net_rwnd *w)
{
    uint32_t all = w->held;
    w->held = 0;
    return all;
}

#endif
