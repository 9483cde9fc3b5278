/* Receive-window credit kept back (net_rwnd.h). */
#include "net/net_rwnd.h"

void net_rwnd_init(struct net_rwnd *w, uint32_t max, uint32_t window)
{
    w->hold = window < max ? max - window : 0;
    w->held = 0;
}

uint16_t net_rwnd_consume(struct net_rwnd *w, uint16_t len)
{
    uint32_t keep = len < w->hold ? len : w->hold;
    w->hold -= keep;
    w->held += keep; /* held + hold never exceeds the max it started from */
    return (uint16_t)(len - keep);
}

uint32_t net_rwnd_release(struct net_rwnd *w)
{
    uint32_t all = w->held;
    w->held = 0;
    return all;
}
