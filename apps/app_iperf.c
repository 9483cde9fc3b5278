/* app=iperf: TCP throughput against iperf 2 on the host.
 * role=server: lwIP's lwiperf server on dst_port= (5001 unless given);
 *   ends once sessions= client streams have finished, or at duration=
 *   (default IPERF_SERVER_S).
 * role=client: sessions= parallel TCP streams to dst_ip:dst_port for
 *   duration= (default 10 s). lwiperf's own client (lwIP 2.1.3) always
 *   runs 10 s, so the client side is a plain iperf 2 stream written here on
 *   the raw API: a zero-filled stream, whose leading zero header words mean
 *   "no options" to an iperf 2 server, exactly as lwiperf's client sends.
 * Reports Gbit/s per session and in total. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app_list.h"
#include "apps/apps_common.h"
#include "kernel/config.h"
#include "kernel/exit.h"
#include "kernel/result.h"
#include "kernel/time.h"
#include "lwip/apps/lwiperf.h"
#include "lwip/stats.h"
#include "lwip/tcp.h"
#include "net/net.h"

#define IPERF_PORT      5001
#define IPERF_CLIENT_S  10
#define IPERF_SERVER_S  60
#define IPERF_CONNECT_S 5
#define IPERF_MAX_SESS  128
#define IPERF_CHUNK     (16 * 1024)

enum { ROLE_CLIENT = 0, ROLE_SERVER = 1 };

struct iperf_sess {
    unsigned idx;
    struct tcp_pcb *pcb;
    bool connected, done, failed;
    uint64_t bytes;          /* acknowledged (client) / received (server) */
    uint64_t written;        /* client: handed to tcp_write */
    uint64_t t_start, t_end; /* cycles (client) */
    uint32_t ms;             /* server: lwiperf's duration */
    uint64_t retry_at;
};

static struct iperf {
    struct iperf_sess s[IPERF_MAX_SESS];
    unsigned n, reported;
    uint8_t *zeros;
    ip_addr_t dst;
    uint16_t port;
    bool stop;
} ip;

static double gbps(uint64_t bytes, uint64_t ns)
{
    return app_per_s(bytes * 8, ns) / 1e9;
}

/* ---- server: lwiperf */
static void server_report(void *arg, enum lwiperf_report_type type, const ip_addr_t *local_addr,
                          u16_t local_port, const ip_addr_t *remote_addr, u16_t remote_port,
                          u32_t bytes, u32_t ms, u32_t kbps)
{
    (void)arg;
    (void)local_addr;
    (void)local_port;
    (void)remote_addr;
    if (ip.reported == IPERF_MAX_SESS)
        return;
    struct iperf_sess *s = &ip.s[ip.reported];
    s->idx = ip.reported++;
    s->bytes = bytes;
    s->ms = ms;
    s->done = type == LWIPERF_TCP_DONE_SERVER;
    s->failed = !s->done;
    printf("iperf: session %u from port %u: %u bytes in %u ms, %.3f Gbit/s%s\n", s->idx,
           (unsigned)remote_port, (unsigned)bytes, (unsigned)ms, (double)kbps / 1e6,
           s->done ? "" : " (aborted)");
}

/* ---- client: plain iperf 2 stream */
/* Bytes one session may have queued and unacknowledged: an equal share of
 * lwIP's TCP segments, one kept back per session for its FIN. Without it
 * the first 16 sessions filled their 64-segment send buffers and took all
 * 1024 segments; the others connected but never sent a byte, and iperf
 * 2.1.8's server, waiting for their header, failed the read ("runt") and
 * crashed. A Linux client sends its header right after connecting. */
static uint32_t client_share(void)
{
    _Static_assert(MEMP_NUM_TCP_SEG >= 2 * IPERF_MAX_SESS, "two segments per session");
    uint32_t segs = (MEMP_NUM_TCP_SEG - ip.n) / ip.n;
    if (segs > TCP_SND_BUF / TCP_MSS)
        segs = TCP_SND_BUF / TCP_MSS;
    return segs * TCP_MSS;
}

static void client_push(struct iperf_sess *s)
{
    uint32_t share = client_share();
    while (s->pcb && s->connected && !ip.stop) {
        /* Not TCP_SND_BUF - tcp_sndbuf(): that reads at most 0xffff. */
        uint64_t queued = s->written - s->bytes;
        uint32_t room = queued < share ? share - (uint32_t)queued : 0;
        if (room > tcp_sndbuf(s->pcb))
            room = tcp_sndbuf(s->pcb);
        if (room < TCP_MSS)
            break;
        uint32_t n = room < IPERF_CHUNK ? room : IPERF_CHUNK;
        if (tcp_write(s->pcb, ip.zeros, (u16_t)n, 0) != ERR_OK)
            break;
        s->written += n;
    }
    if (s->pcb)
        tcp_output(s->pcb);
}

static err_t client_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    (void)pcb;
    struct iperf_sess *s = arg;
    s->bytes += len;
    s->t_end = time_cycles();
    client_push(s);
    return ERR_OK;
}

static void client_err(void *arg, err_t err)
{
    struct iperf_sess *s = arg;
    s->pcb = NULL;
    if (!s->connected) {
        s->retry_at = time_cycles() + time_ns_to_cycles(200000000ull);
        return;
    }
    s->connected = false;
    if (!ip.stop) {
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
    s->connected = false;
    if (!ip.stop)
        s->failed = true;
    return ERR_OK;
}

static err_t client_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    (void)pcb;
    struct iperf_sess *s = arg;
    if (err != ERR_OK)
        return err;
    s->connected = true;
    s->t_start = s->t_end = time_cycles();
    client_push(s);
    return ERR_OK;
}

static void client_connect(struct iperf_sess *s)
{
    s->retry_at = 0;
    s->pcb = tcp_new();
    if (!s->pcb)
        vn_fatal(VN_EXIT_OOM, "iperf: no TCP PCB for session %u", s->idx);
    tcp_arg(s->pcb, s);
    tcp_sent(s->pcb, client_sent);
    tcp_err(s->pcb, client_err);
    tcp_recv(s->pcb, client_recv);
    if (tcp_connect(s->pcb, &ip.dst, ip.port, client_connected) != ERR_OK)
        vn_fatal(VN_EXIT_NETWORK, "iperf: tcp_connect failed for session %u", s->idx);
}

static void iperf_result(uint64_t ns, bool server, uint64_t segs)
{
    uint64_t total = 0, total_ns = 0;
    unsigned n = server ? ip.reported : ip.n;
    for (unsigned i = 0; i < n; i++) {
        const struct iperf_sess *s = &ip.s[i];
        total += s->bytes;
        uint64_t sns =
            server ? (uint64_t)s->ms * 1000000u : time_cycles_to_ns(s->t_end - s->t_start);
        if (sns > total_ns)
            total_ns = sns;
    }
    /* Client: bytes acknowledged up to the last acknowledgement, the
     * drain's included, over the time until then. */
    if (total_ns == 0)
        total_ns = ns;
    printf("iperf: %s, %u session%s: %.3f Gbit/s total\n", server ? "server" : "client", n,
           n == 1 ? "" : "s", gbps(total, total_ns));
    struct json *j = app_result_begin(segs, total, total_ns);
    json_str(j, "role", server ? "server" : "client");
    json_u64(j, "port", ip.port);
    json_double(j, "gbps", gbps(total, total_ns));
    json_arr_begin(j, "sessions");
    for (unsigned i = 0; i < n; i++) {
        const struct iperf_sess *s = &ip.s[i];
        uint64_t sns =
            server ? (uint64_t)s->ms * 1000000u : time_cycles_to_ns(s->t_end - s->t_start);
        json_obj_begin(j, NULL);
        json_u64(j, "bytes", s->bytes);
        json_u64(j, "duration_ns", sns);
        json_double(j, "gbps", gbps(s->bytes, sns));
        /* A stream that moved nothing did not work, whatever lwIP said. */
        json_bool(j, "ok", !s->failed && s->bytes > 0);
        json_obj_end(j);
    }
    json_arr_end(j);
    app_result_end(j);
}

int app_iperf_main(void)
{
    bool server = cfg.role == ROLE_SERVER;
    ip.n = (unsigned)cfg.sessions;
    if (ip.n > IPERF_MAX_SESS)
        vn_fatal(VN_EXIT_CONFIG, "iperf: sessions=%u, at most %d", ip.n, IPERF_MAX_SESS);
    ip.port = config_given(&cfg, "dst_port") ? cfg.dst_port : IPERF_PORT;
    ip_addr_set_ip4_u32(&ip.dst, cfg.dst_ip);
    net_init(1);
    if (server) {
        if (!lwiperf_start_tcp_server(IP4_ADDR_ANY, ip.port, server_report, NULL))
            vn_fatal(VN_EXIT_INTERNAL, "iperf: cannot start the server on port %u", ip.port);
    } else {
        uint8_t mac[6];
        net_dst_mac(mac);
        ip.zeros = calloc(1, IPERF_CHUNK);
        if (!ip.zeros)
            vn_fatal(VN_EXIT_OOM, "iperf: no memory");
        for (unsigned i = 0; i < ip.n; i++) {
            ip.s[i].idx = i;
            client_connect(&ip.s[i]);
        }
    }
    printf("iperf: %s on port %u, %u session%s\n", server ? "server" : "client", ip.port, ip.n,
           ip.n == 1 ? "" : "s");

    struct meter m;
    meter_start(&m);
    /* Live samples count frames at the netif (64-bit; lwIP's own stats are
     * 16-bit and wrap within a second) and, while sessions run, the
     * bytes the stack took in and gave out. */
    const struct net_if *nif0 = net_if_get(0);
    uint64_t start = m.t0, now = start, segs0 = nif0->lwip_rx + nif0->lwip_tx_sent;
    uint64_t wire0 = nif0->lwip_rx_bytes + nif0->lwip_tx_sent_bytes;
    uint64_t end = app_deadline(start, server ? IPERF_SERVER_S : IPERF_CLIENT_S);
    uint64_t connect_end = start + IPERF_CONNECT_S * time_tsc_hz;
    for (;;) {
        now = time_cycles();
        if (now >= end)
            break;
        net_poll();
        if (server && ip.reported >= ip.n)
            break;
        if (!server) {
            unsigned failed = 0;
            for (unsigned i = 0; i < ip.n; i++) {
                struct iperf_sess *s = &ip.s[i];
                if (!s->connected && !s->failed && s->retry_at && now >= s->retry_at) {
                    if (now >= connect_end)
                        vn_fatal(VN_EXIT_NETWORK, "iperf: TCP connect to port %u refused for %d s",
                                 ip.port, IPERF_CONNECT_S);
                    client_connect(s);
                }
                client_push(s);
                failed += s->failed;
            }
            if (failed == ip.n)
                break;
        }
        if (meter_due(&m, now)) {
            uint64_t b = nif0->lwip_rx_bytes + nif0->lwip_tx_sent_bytes - wire0;
            struct json *j = meter_sample(&m, now, nif0->lwip_rx + nif0->lwip_tx_sent - segs0, b);
            json_u64(j, "sessions_done", ip.reported);
            result_end();
        }
    }
    ip.stop = true;
    /* Closed with the sent callback kept (s outlives the pcb): what was in
     * flight at the end is acknowledged during the drain and counted, as
     * the host's server counts it (up to a session's share of segments). */
    for (unsigned i = 0; !server && i < ip.n; i++)
        if (ip.s[i].pcb) {
            struct tcp_pcb *pcb = ip.s[i].pcb;
            ip.s[i].pcb = NULL;
            if (tcp_close(pcb) != ERR_OK) {
                tcp_arg(pcb, NULL);
                tcp_abort(pcb);
            }
        }
    uint64_t drain_end = time_cycles() + time_ns_to_cycles(200000000ull);
    while (time_cycles() < drain_end)
        net_poll();
    uint64_t ns = time_cycles_to_ns(now - start);
    iperf_result(ns, server, nif0->lwip_rx + nif0->lwip_tx_sent - segs0);
    unsigned ok = 0, n = server ? ip.reported : ip.n;
    for (unsigned i = 0; i < n; i++)
        ok += !ip.s[i].failed && ip.s[i].bytes > 0;
    if (server && ip.reported < ip.n) {
        printf("iperf: %u of sessions=%u client streams finished\n", ip.reported, ip.n);
        return VN_EXIT_TEST_FAILED;
    }
    if (ok < n)
        return server ? VN_EXIT_TEST_FAILED : VN_EXIT_NETWORK;
    return VN_EXIT_OK;
}
