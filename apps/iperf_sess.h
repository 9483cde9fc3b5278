/* app=iperf: one stream (a session) and how it ended, without lwIP, so
 * that the counting is host-testable (tests/unit/test_iperf_sess.c). */
#ifndef VN_IPERF_SESS_H
#define VN_IPERF_SESS_H

#include <stdbool.h>
#include <stdint.h>

#include "net/net_rwnd.h"

struct tcp_pcb;

/* How a server's stream ended: the client's FIN (complete), lwIP's error
 * callback (a reset or an abort: incomplete), or cut by the end of the
 * run while still open. */
enum iperf_end { IPERF_END_OPEN, IPERF_END_FIN, IPERF_END_ABORTED, IPERF_END_CUT };

struct iperf_sess {
    unsigned idx;
    struct tcp_pcb *pcb;
    bool connected, done, failed;
    enum iperf_end end; /* server */
    uint64_t written;   /* client: queued into lwIP */
    uint64_t bytes;     /* client: acknowledged; server: received */
    uint64_t t_start, t_end;
    uint32_t zoff;        /* client: next write's offset into the payload */
    uint64_t cap;         /* client: most bytes in lwIP's queues at once */
    uint64_t retry_at;    /* client: connect retry */
    int connect_err;      /* client: lwIP's error of the last tcp_connect that failed, or 0 */
    uint16_t lport;       /* client: the connection's local port (the host names it by it) */
    uint32_t rto_ms;      /* client: lwIP's retransmit timeout at the last ACK */
    uint32_t probes;      /* client: tail-loss probes sent, at the last ACK */
    struct net_rwnd rwnd; /* server: the window= kept to */
};

/* Server: the streams that ended, by how. */
struct iperf_tally {
    unsigned finished; /* by the client's FIN */
    unsigned aborted;  /* by a reset or an abort */
};

/* Ends s at cycle now, once: a later end (lwIP's error after the FIN,
 * the run's end after an abort) changes nothing and returns false. */
bool iperf_sess_end(struct iperf_tally *t, struct iperf_sess *s, enum iperf_end how, uint64_t now);

/* Every one of n streams ended by a FIN or an abort: the server is done. */
bool iperf_tally_all_ended(const struct iperf_tally *t, unsigned n);

/* Client: what lwIP still held unacknowledged when the run ended (the
 * drain gave up on it). The host may have received any part of it: its
 * ACKs can be lost on the way back (a tap's full queue towards QEMU). */
uint64_t iperf_sess_unacked(const struct iperf_sess *s);

/* Client: what a stream may hold unacknowledged, written but not yet
 * acknowledged: its share cap, and twice what the peer's window lets out
 * (peer_wnd), at least one write of msg bytes. lwIP appends a write after
 * the last unsent segment, found by walking the unsent queue (tcp_out.c,
 * tcp_write); behind a 64 KiB window (slirp, passt: no window scaling)
 * the share alone queued ~2800 segments of 1460 bytes, and that walk was
 * 12.5% of the guest's time. Twice the window refills it from each ACK. */
uint64_t iperf_sess_limit(uint64_t cap, uint32_t peer_wnd, uint32_t msg);

/* "fin", "aborted", "cut" or "open" (the result's per-session "end"). */
const char *iperf_end_name(enum iperf_end how);

#endif
