/* app=iperf: how a server's streams ended (iperf_sess.h). Only a FIN
 * completes a stream; a reset one is counted apart, so the run can say
 * so instead of taking it for finished. And a client stream's bounds on
 * what it holds unacknowledged. */
#include "apps/iperf_sess.h"

bool iperf_sess_end(struct iperf_tally *t, struct iperf_sess *s, enum iperf_end how, uint64_t now)
{
    if (s->done || how == IPERF_END_OPEN)
        return false;
    s->done = true;
    s->end = how;
    s->failed = how != IPERF_END_FIN;
    s->t_end = now;
    if (how == IPERF_END_FIN)
        t->finished++;
    else if (how == IPERF_END_ABORTED)
        t->aborted++;
    return true;
}

bool iperf_tally_all_ended(const struct iperf_tally *t, unsigned n)
{
    return t->finished + t->aborted >= n;
}

uint64_t iperf_sess_unacked(const struct iperf_sess *s)
{
    return s->written > s->bytes ? s->written - s->bytes : 0;
}

uint64_t iperf_sess_limit(uint64_t cap, uint32_t peer_wnd, uint32_t msg)
{
    uint64_t w = 2 * (uint64_t)peer_wnd;
    if (w < msg)
        w = msg;
    return w < cap ? w : cap;
}

const char *iperf_end_name(enum iperf_end how)
{
    switch (how) {
    case IPERF_END_FIN:
        return "fin";
    case IPERF_END_ABORTED:
        return "aborted";
    case IPERF_END_CUT:
        return "cut";
    case IPERF_END_OPEN:
        break;
    }
    return "open";
}
