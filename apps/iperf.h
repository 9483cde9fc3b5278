/* app=iperf, the TCP stream against iperf 2 on the host (docs/apps.md):
 * state shared by the client (iperf_client.c), the server
 * (iperf_server.c) and the run loop with its result (app_iperf.c). */
#ifndef VN_IPERF_H
#define VN_IPERF_H

#include <stdbool.h>
#include <stdint.h>

#include "apps/iperf_sess.h"
#include "lwip/ip_addr.h"

#define IPERF_PORT      5001
#define IPERF_MAX_SESS  128
#define IPERF_CONNECT_S 5    /* client: refused connects are retried this long */
#define IPERF_DRAIN_MS  2000 /* client: acknowledgements after the close */
#define IPERF_LINGER_MS 200  /* FINs and last ACKs out before the result */

/* The client's payload: zeros (to an iperf 2 server, a header of zero
 * words means "no options"), handed to lwIP by reference, never copied.
 * Writes walk through it, so consecutive ones are adjacent and lwIP
 * extends one ROM pbuf instead of chaining another per write. */
#define IPERF_ZBUF (256 * 1024)

struct iperf {
    struct iperf_sess s[IPERF_MAX_SESS];
    unsigned n;               /* sessions= */
    unsigned accepted;        /* server: connections taken */
    struct iperf_tally ended; /* server: streams ended, by how */
    uint32_t msg;             /* msg_size= */
    uint32_t window;          /* window= */
    const uint8_t *zbuf;
    ip_addr_t dst;
    uint16_t port;
    bool stop;
};

extern struct iperf iperf_state;

/* n sessions (a client's msg bytes per write to dst) on port, every
 * earlier session's state cleared (app=reneg runs a stream per set). */
void iperf_setup(unsigned n, uint32_t msg, const ip_addr_t *dst, uint16_t port);
/* Client: connects every session (retrying refused connects until
 * connect_end), keeps each send buffer full, then at stop closes and
 * counts what the host acknowledges. */
void iperf_client_start(void);
unsigned iperf_client_failed(void);
/* One round of the client's loop (app iperf's and reneg's): the stack
 * polled, refused connects retried, every send buffer filled, then on an
 * empty ring a halt until wake. Returns the sessions failed. */
unsigned iperf_client_round(uint64_t now, uint64_t connect_end, uint64_t wake);
void iperf_client_stop(void);
/* True while a closed session still has unacknowledged data. */
bool iperf_client_draining(void);

/* Client session i as it ended: bytes the host acknowledged, its time
 * from connect to the last acknowledgement, what lwIP still held
 * unacknowledged, and whether it worked (connected, moved bytes, not lost). */
struct iperf_client_count {
    uint64_t bytes, ns, unacked;
    uint16_t lport; /* the connection's local port, 0 if it never connected */
    bool ok;
};
void iperf_client_count(unsigned i, struct iperf_client_count *out);
/* True while a session the client closed waits for the host's FIN. */
bool iperf_client_closing(void);
/* Every session let go of, so that iperf_setup may reuse its state. */
void iperf_client_release(void);

/* Polls the stack for ms, or until more() says false. */
void iperf_poll_for(uint64_t ms, bool (*more)(void));
/* A session's time: from its start (connect, accept) to its last byte. */
uint64_t iperf_sess_ns(const struct iperf_sess *s);
/* A stream that moved nothing did not work, whatever lwIP said. */
bool iperf_sess_ok(const struct iperf_sess *s);

/* Server: listens on iperf_state.port; every accepted stream is a session. */
void iperf_server_start(void);
void iperf_server_stop(void);

/* Server: the listener's half-open connections (iperf_syn.c): evicted
 * oldest first for a new SYN, counted as they are opened, accepted,
 * dropped before the handshake, or refused for want of a pcb. */
struct json;
struct tcp_pcb;
void iperf_syn_listen(struct tcp_pcb *pcb);
void iperf_syn_accepted(struct tcp_pcb *pcb);
void iperf_syn_refused(void);
void iperf_syn_json(struct json *j);
uint64_t iperf_syn_lost(void);

#endif
