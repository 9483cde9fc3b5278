/* app=rr: request/response latency, netperf TCP_RR / UDP_RR semantics on
 * lwIP's raw API. The client keeps one transaction in flight per session
 * (sessions=): it sends req_size bytes, waits for resp_size bytes back,
 * records the round trip in a log-linear histogram and sends the next.
 * The server answers every req_size bytes with resp_size bytes. Both
 * sides use dst_port= as the server's port, so the same line works for
 * both. The first min(8, req_size, resp_size) bytes carry the transaction
 * number so a late UDP answer is not taken for the current one. UDP
 * with several pairs and CPUs runs per vCPU on the raw path: the server
 * in apps/rr_mq.c, the client in apps/rr_mq_client.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app_config.h"
#include "apps/app_list.h"
#include "apps/apps_common.h"
#include "apps/apps_net.h"
#include "apps/hist.h"
#include "apps/rr_mq.h"
#include "apps/rr_result.h"
#include "kernel/exit.h"
#include "kernel/result.h"
#include "kernel/time.h"
#include "lwip/tcp.h"
#include "lwip/udp.h"
#include "net/net.h"

#define RR_DEFAULT_S      10
#define RR_UDP_TIMEOUT_MS 200 /* a UDP request or answer lost: send a new one */
#define RR_CONNECT_S      5   /* TCP connect retries (the server may still boot) */
#define RR_SERVER_IDLE_S  2   /* the server ends this long after the last request */
#define RR_ID_LEN         8

struct rr_sess {
    unsigned idx;
    struct udp_pcb *upcb;
    struct tcp_pcb *tpcb;
    bool connected, failed;
    uint64_t id;          /* transaction number in flight */
    uint64_t t_send;      /* cycles */
    uint32_t got;         /* bytes of the answer (client) / request (server) so far */
    uint32_t tx_left;     /* bytes of the current message still to queue (TCP) */
    uint32_t answers_due; /* server: answers owed (TCP) */
    uint64_t retry_at;    /* TCP connect retry */
};

static struct rr {
    struct rr_sess *s;
    unsigned n;
    uint32_t req, resp;
    uint8_t *zeros;
    struct hist lat; /* ns */
    uint64_t transactions, timeouts, late, msgs, bytes, accepted;
    uint64_t unsent;   /* UDP messages not sent: no ARP entry for the next hop yet */
    uint64_t last_req; /* cycles of the last request seen (server) */
    ip_addr_t dst;
    uint16_t port; /* dst_port=: the server's */
    bool server;   /* role=server */
    uint64_t end, count;
} rr_state;

static uint64_t now_cycles(void)
{
    return time_cycles();
}

static inline unsigned id_len(void)
{
    unsigned n = rr_state.req < rr_state.resp ? rr_state.req : rr_state.resp;
    return n < RR_ID_LEN ? n : RR_ID_LEN;
}

static void put_id(uint8_t *p, uint64_t id, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(id >> (8 * i));
}

static uint64_t get_id(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static bool id_match(uint64_t a, uint64_t b, unsigned n)
{
    uint64_t mask = n >= 8 ? UINT64_MAX : (((uint64_t)1 << (8 * n)) - 1);
    return ((a ^ b) & mask) == 0;
}

/* ---- UDP */
/* Returns whether the message went to the device. One held back for ARP
 * or neighbour discovery would leave later or never: it is not sent and
 * not counted. */
static bool udp_send_msg(struct udp_pcb *pcb, const ip_addr_t *to, u16_t port, uint32_t len,
                         uint64_t id)
{
    if (!net_next_hop_known_addr(to)) {
        rr_state.unsent++;
        return false;
    }
    struct pbuf *p = pbuf_alloc(PBUF_TRANSPORT, (u16_t)len, PBUF_RAM);
    if (!p) {
        rr_state.unsent++; /* the client's retry timer sends it again */
        return false;
    }
    pbuf_take(p, rr_state.zeros, (u16_t)len);
    uint8_t idb[RR_ID_LEN];
    put_id(idb, id, id_len());
    pbuf_take_at(p, idb, (u16_t)id_len(), 0);
    bool sent = udp_sendto(pcb, p, to, port) == ERR_OK;
    if (sent) {
        rr_state.msgs++;
        rr_state.bytes += len;
    } else {
        rr_state.unsent++;
    }
    pbuf_free(p);
    return sent;
}

static void udp_client_send(struct rr_sess *s)
{
    s->id++;
    s->t_send = now_cycles();
    udp_send_msg(s->upcb, &rr_state.dst, rr_state.port, rr_state.req, s->id);
}

static void udp_client_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr,
                            u16_t port)
{
    (void)pcb;
    (void)addr;
    (void)port;
    struct rr_sess *s = arg;
    uint8_t idb[RR_ID_LEN] = {0};
    uint64_t now = now_cycles();
    unsigned n = id_len();
    bool ok = p->tot_len == rr_state.resp && pbuf_copy_partial(p, idb, (u16_t)n, 0) == n &&
              id_match(get_id(idb, n), s->id, n);
    rr_state.msgs++;
    rr_state.bytes += p->tot_len;
    pbuf_free(p);
    if (!ok) {
        rr_state.late++;
        return;
    }
    hist_add(&rr_state.lat, app_cycles_ns(now - s->t_send));
    rr_state.transactions++;
    if (rr_state.transactions < rr_state.count)
        udp_client_send(s);
}

static void udp_server_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr,
                            u16_t port)
{
    (void)arg;
    uint8_t idb[RR_ID_LEN] = {0};
    unsigned n = id_len();
    pbuf_copy_partial(p, idb, (u16_t)n, 0);
    rr_state.msgs++;
    rr_state.bytes += p->tot_len;
    pbuf_free(p);
    rr_state.last_req = now_cycles();
    /* A transaction is an answer that left. */
    if (udp_send_msg(pcb, addr, port, rr_state.resp, get_id(idb, n)))
        rr_state.transactions++;
}

/* ---- TCP */
static void tcp_push_msg(struct rr_sess *s)
{
    struct tcp_pcb *pcb = s->tpcb;
    while (pcb && s->tx_left) {
        uint32_t room = tcp_sndbuf(pcb);
        uint32_t n = s->tx_left < room ? s->tx_left : room;
        if (n > 0xffff)
            n = 0xffff;
        if (n == 0 || tcp_write(pcb, rr_state.zeros, (u16_t)n, TCP_WRITE_FLAG_COPY) != ERR_OK)
            break;
        s->tx_left -= n;
        rr_state.bytes += n;
    }
    if (pcb)
        tcp_output(pcb);
}

static void tcp_client_send(struct rr_sess *s)
{
    s->id++;
    s->t_send = now_cycles();
    s->tx_left = rr_state.req;
    rr_state.msgs++;
    tcp_push_msg(s);
}

static void tcp_server_answer(struct rr_sess *s)
{
    while (s->answers_due && s->tx_left == 0) {
        s->answers_due--;
        s->tx_left = rr_state.resp;
        rr_state.msgs++;
        tcp_push_msg(s);
    }
}

static err_t tcp_sent_cb(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    (void)pcb;
    (void)len;
    struct rr_sess *s = arg;
    tcp_push_msg(s);
    if (rr_state.server)
        tcp_server_answer(s);
    return ERR_OK;
}

static err_t tcp_recv_cb(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct rr_sess *s = arg;
    if (!p || err != ERR_OK) {
        if (p)
            pbuf_free(p);
        /* Peer closed: a client session that still runs has failed. */
        tcp_arg(pcb, NULL);
        tcp_recv(pcb, NULL);
        tcp_sent(pcb, NULL);
        tcp_err(pcb, NULL);
        s->tpcb = NULL;
        s->connected = false;
        if (!rr_state.server)
            s->failed = true;
        /* lwIP: ERR_ABRT only after tcp_abort(); a closed pcb is ERR_OK. */
        if (tcp_close(pcb) != ERR_OK) {
            tcp_abort(pcb);
            return ERR_ABRT;
        }
        return ERR_OK;
    }
    uint32_t len = p->tot_len;
    tcp_recved(pcb, (u16_t)len);
    pbuf_free(p);
    uint64_t now = now_cycles();
    rr_state.bytes += len;
    s->got += len;
    if (rr_state.server) {
        rr_state.last_req = now;
        while (s->got >= rr_state.req) {
            s->got -= rr_state.req;
            s->answers_due++;
            rr_state.transactions++;
            rr_state.msgs++; /* a whole request: messages count both ways, as for UDP */
        }
        tcp_server_answer(s);
        return ERR_OK;
    }
    while (s->got >= rr_state.resp) {
        s->got -= rr_state.resp;
        hist_add(&rr_state.lat, app_cycles_ns(now - s->t_send));
        rr_state.transactions++;
        rr_state.msgs++; /* a whole reply */
        if (rr_state.transactions < rr_state.count)
            tcp_client_send(s);
    }
    return ERR_OK;
}

static void tcp_err_cb(void *arg, err_t err)
{
    struct rr_sess *s = arg;
    if (!s)
        return;
    s->tpcb = NULL;
    if (!s->connected && !rr_state.server) {
        /* Refused or reset before it was up: the server may not be up yet. */
        s->retry_at = now_cycles() + time_ns_to_cycles(200000000ull);
        return;
    }
    s->connected = false;
    s->failed = true;
    printf("rr: session %u: connection lost (lwIP err %d)\n", s->idx, err);
}

static err_t tcp_connected_cb(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct rr_sess *s = arg;
    (void)pcb;
    if (err != ERR_OK)
        return err;
    s->connected = true;
    tcp_client_send(s);
    return ERR_OK;
}

static void tcp_client_connect(struct rr_sess *s)
{
    s->retry_at = 0;
    s->tpcb = tcp_new_ip_type(IP_GET_TYPE(&rr_state.dst));
    if (!s->tpcb)
        vn_fatal(VN_EXIT_OOM, "rr: no TCP PCB for session %u", s->idx);
    tcp_arg(s->tpcb, s);
    tcp_nagle_disable(s->tpcb);
    tcp_recv(s->tpcb, tcp_recv_cb);
    tcp_sent(s->tpcb, tcp_sent_cb);
    tcp_err(s->tpcb, tcp_err_cb);
    err_t e = tcp_connect(s->tpcb, &rr_state.dst, rr_state.port, tcp_connected_cb);
    if (e != ERR_OK)
        vn_fatal(VN_EXIT_NETWORK, "rr: tcp_connect failed for session %u: lwIP error %d", s->idx,
                 e);
}

static err_t tcp_accept_cb(void *arg, struct tcp_pcb *pcb, err_t err)
{
    (void)arg;
    if (err != ERR_OK || !pcb)
        return ERR_VAL;
    /* Reuse the slot of a finished connection first. */
    for (unsigned i = 0; i < rr_state.n; i++) {
        struct rr_sess *s = &rr_state.s[i];
        if (s->tpcb)
            continue;
        memset(s, 0, sizeof(*s));
        s->idx = i;
        s->tpcb = pcb;
        s->connected = true;
        rr_state.accepted++;
        tcp_arg(pcb, s);
        tcp_nagle_disable(pcb);
        tcp_recv(pcb, tcp_recv_cb);
        tcp_sent(pcb, tcp_sent_cb);
        tcp_err(pcb, tcp_err_cb);
        return ERR_OK;
    }
    tcp_abort(pcb);
    return ERR_ABRT;
}

static void rr_result(const struct app_config *c, uint64_t ns)
{
    double tps = app_per_s(rr_state.transactions, ns);
    printf("rr: %s %s: %llu transactions, %.0f/s, p50 %.1f us, p99 %.1f us\n",
           c->proto == CFG_PROTO_TCP ? "tcp" : "udp", rr_state.server ? "server" : "client",
           (unsigned long long)rr_state.transactions, tps,
           (double)hist_quantile(&rr_state.lat, 0.5) / 1e3,
           (double)hist_quantile(&rr_state.lat, 0.99) / 1e3);
    /* Latency is measured where the transaction starts: the client. */
    bool lat = !rr_state.server;
    if (lat)
        app_hist_lines("latency", &rr_state.lat, 1.0);
    struct json *j = app_result_begin(c, rr_state.msgs, rr_state.bytes, ns);
    struct rr_result r = {
        .server = rr_state.server,
        .tcp = c->proto == CFG_PROTO_TCP,
        .sessions = rr_state.server ? rr_state.accepted : rr_state.n,
        .req_size = rr_state.req,
        .resp_size = rr_state.resp,
        .transactions = rr_state.transactions,
        .timeouts = rr_state.timeouts,
        .late = rr_state.late,
        .unsent = rr_state.unsent,
        .lat = lat ? &rr_state.lat : NULL,
    };
    rr_result_json(j, &r, tps);
    app_result_end(j);
}

/* A server takes as many connections as lwIP has PCBs for. */
#define RR_SERVER_SLOTS 128

static void rr_setup(const struct app_config *c)
{
    rr_state.server = c->role == CFG_ROLE_SERVER;
    rr_state.port = c->dst_port;
    rr_state.n = rr_state.server ? RR_SERVER_SLOTS : (unsigned)c->sessions;
    rr_state.req = (uint32_t)c->req_size;
    rr_state.resp = (uint32_t)c->resp_size;
    rr_state.count = c->count ? c->count : UINT64_MAX;
    uint32_t big = rr_state.req > rr_state.resp ? rr_state.req : rr_state.resp;
    rr_state.s = calloc(rr_state.n, sizeof(*rr_state.s));
    rr_state.zeros = calloc(1, big);
    if (!rr_state.s || !rr_state.zeros)
        vn_fatal(VN_EXIT_OOM, "rr: no memory for %u sessions", rr_state.n);
    hist_init(&rr_state.lat);
    apps_peer_addr(c, &rr_state.dst);
}

/* The server's socket: UDP bound or TCP listening on dst_port=. */
static void rr_listen(bool tcp)
{
    if (!tcp) {
        struct udp_pcb *pcb = udp_new();
        if (!pcb || udp_bind(pcb, IP_ANY_TYPE, rr_state.port) != ERR_OK)
            vn_fatal(VN_EXIT_INTERNAL, "rr: cannot bind UDP port %u", (unsigned)rr_state.port);
        udp_recv(pcb, udp_server_recv, NULL);
        return;
    }
    struct tcp_pcb *l = tcp_new();
    if (!l || tcp_bind(l, IP_ANY_TYPE, rr_state.port) != ERR_OK || !(l = tcp_listen(l)))
        vn_fatal(VN_EXIT_INTERNAL, "rr: cannot listen on TCP port %u", (unsigned)rr_state.port);
    tcp_accept(l, tcp_accept_cb);
}

/* The client's sessions: each connects (TCP) or sends its first request
 * (UDP). */
static void rr_open_sessions(bool tcp)
{
    for (unsigned i = 0; i < rr_state.n; i++) {
        struct rr_sess *s = &rr_state.s[i];
        s->idx = i;
        if (tcp) {
            tcp_client_connect(s);
            continue;
        }
        s->upcb = udp_new();
        if (!s->upcb || udp_bind(s->upcb, IP_ANY_TYPE, 0) != ERR_OK)
            vn_fatal(VN_EXIT_INTERNAL, "rr: no UDP PCB for session %u", i);
        udp_recv(s->upcb, udp_client_recv, s);
        udp_client_send(s);
    }
}

/* The client's sessions once a round: TCP connect retries until
 * connect_end, queued TCP bytes pushed, lost UDP transactions sent again.
 * Returns whether a session still runs. */
static bool rr_client_round(bool tcp, uint64_t now, uint64_t connect_end, uint64_t udp_timeout)
{
    unsigned failed = 0;
    for (unsigned i = 0; i < rr_state.n; i++) {
        struct rr_sess *s = &rr_state.s[i];
        if (tcp && !s->connected && !s->failed && s->retry_at && now >= s->retry_at) {
            if (now >= connect_end)
                vn_fatal(VN_EXIT_NETWORK, "rr: TCP connect to port %u refused for %d s",
                         (unsigned)rr_state.port, RR_CONNECT_S);
            tcp_client_connect(s);
        }
        if (tcp && s->connected)
            tcp_push_msg(s);
        if (!tcp && now - s->t_send > udp_timeout) {
            rr_state.timeouts++;
            udp_client_send(s);
        }
        failed += s->failed;
    }
    return failed != rr_state.n;
}

/* A "sample" line; returns the transactions so far (the next one's base). */
static uint64_t rr_sample(struct meter *m, uint64_t now, uint64_t tr_last)
{
    uint64_t tr = rr_state.transactions;
    struct json *j = meter_sample(m, now, rr_state.msgs, rr_state.bytes);
    json_u64(j, "transactions", tr);
    json_double(j, "tps", app_per_s(tr - tr_last, m->span_ns));
    json_double(j, "p99_us", (double)hist_quantile(&rr_state.lat, 0.99) / 1e3);
    result_end();
    return tr;
}

/* The transactions until count=, the deadline, a server's idle end or
 * every client session failed. Returns the run's length in ns: a
 * server's from its first transaction to its last request. */
static uint64_t rr_run(const struct app_config *c, bool tcp)
{
    bool server = rr_state.server;
    struct meter m;
    meter_start(&m, c);
    uint64_t start = m.t0, now = start, first = 0, tr_last = 0;
    uint64_t end = app_deadline(c, start, RR_DEFAULT_S);
    uint64_t udp_timeout = time_ns_to_cycles(RR_UDP_TIMEOUT_MS * 1000000ull);
    uint64_t connect_end = start + RR_CONNECT_S * time_tsc_hz;
    uint64_t idle = RR_SERVER_IDLE_S * time_tsc_hz;
    if (!server)
        rr_open_sessions(tcp);
    while (rr_state.transactions < rr_state.count) {
        net_poll();
        /* Read after net_poll: its callbacks stamp t_send and last_req. */
        now = time_cycles();
        if (now >= end)
            break;
        if (rr_state.transactions && !first)
            first = now;
        if (server && rr_state.transactions && now - rr_state.last_req > idle)
            break;
        if (!server && !rr_client_round(tcp, now, connect_end, udp_timeout))
            break;
        if (meter_due(&m, now))
            tr_last = rr_sample(&m, now, tr_last);
    }
    uint64_t stop =
        server && rr_state.transactions && rr_state.last_req < now ? rr_state.last_req : now;
    return time_cycles_to_ns(stop - (server && first ? first : start));
}

/* Close TCP sessions so the peer sees an orderly end, and let lwIP send
 * what that takes. */
static void rr_close(void)
{
    for (unsigned i = 0; i < rr_state.n; i++)
        if (rr_state.s[i].tpcb) {
            tcp_arg(rr_state.s[i].tpcb, NULL);
            tcp_err(rr_state.s[i].tpcb, NULL);
            tcp_recv(rr_state.s[i].tpcb, NULL);
            tcp_sent(rr_state.s[i].tpcb, NULL);
            if (tcp_close(rr_state.s[i].tpcb) != ERR_OK)
                tcp_abort(rr_state.s[i].tpcb);
        }
    uint64_t drain_end = time_cycles() + time_ns_to_cycles(100000000ull);
    while (time_cycles() < drain_end)
        net_poll();
}

/* How the run ended: no transaction, a client session failed, or ok. */
static int rr_exit(bool server)
{
    if (rr_state.transactions == 0) {
        printf("rr: no transaction completed\n");
        return server ? VN_EXIT_TEST_FAILED : VN_EXIT_NETWORK;
    }
    for (unsigned i = 0; i < rr_state.n && !server; i++)
        if (rr_state.s[i].failed)
            return VN_EXIT_NETWORK;
    return VN_EXIT_OK;
}

int app_rr_main(const struct app_config *c)
{
    bool tcp = c->proto == CFG_PROTO_TCP, server = c->role == CFG_ROLE_SERVER;
    if (rr_mq_wanted(c))
        return server ? rr_mq_server(c) : rr_mq_client(c);
    rr_setup(c);
    apps_net_init(c, 1, VNET_OFF_ALL);
    uint8_t mac[6];
    /* Client: a clear error when the server is not there at all. Server:
     * dst_mac= enters the static ARP entry for peers that do not answer
     * ARP (it was ignored: every answer waited for ARP and was lost). */
    if (!server || app_config_given(c, "dst_mac"))
        apps_peer_mac(c, mac);
    if (server)
        rr_listen(tcp);
    printf("rr: %s %s on port %u, %llu session(s), request %u B, response %u B\n",
           tcp ? "tcp" : "udp", server ? "server" : "client", (unsigned)rr_state.port,
           (unsigned long long)c->sessions, rr_state.req, rr_state.resp);
    uint64_t ns = rr_run(c, tcp);
    rr_close();
    rr_result(c, ns);
    return rr_exit(server);
}
