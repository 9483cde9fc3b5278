/* app=iperf: the TCP stream against iperf 2 on the host (docs/apps.md).
 * role=client: sessions= parallel streams to dst_ip:dst_port (5001 unless
 *   given) for duration= (default 10 s), msg_size= bytes per write; then
 *   the streams are closed and what the host acknowledges is counted, so
 *   both ends report the same bytes.
 * role=server: counts the streams of an iperf 2 client; ends once
 *   sessions= streams have finished (the client's FIN) or aborted (a
 *   reset: counted apart, and the run fails). duration= is how
 *   long the host's client sends: the server waits that long plus
 *   IPERF_GRACE_S (the client starts after the guest is up), then ends
 *   with what the streams still open got, and fails.
 * Reports Gbit/s per session and in total. */
#include <stdio.h>
#include <string.h>

#include "apps/app_config.h"
#include "apps/app_list.h"
#include "apps/apps_common.h"
#include "apps/apps_net.h"
#include "apps/iperf.h"
#include "kernel/exit.h"
#include "kernel/result.h"
#include "kernel/time.h"
#include "lwip/tcp.h"
#include "net/net.h"

#define IPERF_CLIENT_S 10
#define IPERF_SERVER_S 60 /* server without duration=: the longest wait */
#define IPERF_GRACE_S  10

struct iperf iperf_state;

static double gbps(uint64_t bytes, uint64_t ns)
{
    return app_per_s(bytes * 8, ns) / 1e9;
}

static unsigned iperf_nsess(bool server)
{
    return server ? iperf_state.accepted : iperf_state.n;
}

void iperf_setup(unsigned n, uint32_t msg, const ip_addr_t *dst, uint16_t port)
{
    memset(iperf_state.s, 0, sizeof(iperf_state.s));
    iperf_state.n = n;
    iperf_state.msg = msg;
    iperf_state.dst = *dst;
    iperf_state.port = port;
    iperf_state.accepted = 0;
    iperf_state.ended = (struct iperf_tally){0};
    iperf_state.stop = false;
}

uint64_t iperf_sess_ns(const struct iperf_sess *s)
{
    return s->t_start ? time_cycles_to_ns(s->t_end - s->t_start) : 0;
}

bool iperf_sess_ok(const struct iperf_sess *s)
{
    return !s->failed && s->bytes > 0;
}

static void iperf_result(const struct app_config *c, uint64_t ns, bool server, uint64_t segs)
{
    uint64_t total = 0, total_ns = 0, unacked = 0;
    unsigned n = iperf_nsess(server);
    for (unsigned i = 0; i < n; i++) {
        total += iperf_state.s[i].bytes;
        unacked += server ? 0 : iperf_sess_unacked(&iperf_state.s[i]);
        if (iperf_sess_ns(&iperf_state.s[i]) > total_ns)
            total_ns = iperf_sess_ns(&iperf_state.s[i]);
    }
    if (total_ns == 0)
        total_ns = ns;
    printf("iperf: %s, %u session%s, msg_size %u: %.3f Gbit/s total\n",
           server ? "server" : "client", n, n == 1 ? "" : "s", iperf_state.msg,
           gbps(total, total_ns));
    if (server && iperf_syn_lost())
        printf("iperf: %llu connection attempts dropped before their handshake completed\n",
               (unsigned long long)iperf_syn_lost());
    if (unacked)
        printf("iperf: %llu bytes still unacknowledged after the %d ms drain (not counted)\n",
               (unsigned long long)unacked, IPERF_DRAIN_MS);
    struct json *j = app_result_begin(c, segs, total, total_ns);
    json_str(j, "role", server ? "server" : "client");
    json_u64(j, "port", iperf_state.port);
    json_u64(j, "msg_size", iperf_state.msg);
    json_double(j, "gbps", gbps(total, total_ns));
    if (server) {
        json_u64(j, "window", iperf_state.window);
        json_u64(j, "finished", iperf_state.ended.finished);
        json_u64(j, "aborted", iperf_state.ended.aborted);
        iperf_syn_json(j);
    } else {
        json_u64(j, "unacked", unacked);
    }
    json_arr_begin(j, "sessions");
    for (unsigned i = 0; i < n; i++) {
        const struct iperf_sess *s = &iperf_state.s[i];
        json_obj_begin(j, NULL);
        json_u64(j, "bytes", s->bytes);
        json_u64(j, "duration_ns", iperf_sess_ns(s));
        json_double(j, "gbps", gbps(s->bytes, iperf_sess_ns(s)));
        json_bool(j, "ok", iperf_sess_ok(s));
        if (server)
            json_str(j, "end", iperf_end_name(s->end));
        else {
            json_u64(j, "unacked", iperf_sess_unacked(s));
            json_u64(j, "rto_ms", s->rto_ms);
            json_u64(j, "tlp_probes", s->probes);
        }
        json_obj_end(j);
    }
    json_arr_end(j);
    app_result_end(j);
}

void iperf_poll_for(uint64_t ms, bool (*more)(void))
{
    uint64_t end = time_cycles() + time_ns_to_cycles(ms * 1000000u);
    while (time_cycles() < end && (!more || more()))
        net_poll();
}

/* The streams' payload so far: a client's acknowledged, a server's
 * received bytes. */
static uint64_t iperf_stream_bytes(bool server)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < iperf_nsess(server); i++)
        total += iperf_state.s[i].bytes;
    return total;
}

/* One round of the server's loop: true once every stream ended, else
 * on an empty ring a halt (notify=irq|hybrid) until a frame or wake. */
static bool iperf_server_round(uint64_t wake)
{
    unsigned got = net_poll();
    if (iperf_tally_all_ended(&iperf_state.ended, iperf_state.n))
        return true;
    if (got == 0)
        net_idle(wake);
    return false;
}

/* The run: until the deadline, every stream finished (server) or
 * failed (client). Samples count frames and bytes at the netif, and
 * the streams' goodput over the interval. */
static uint64_t iperf_run(const struct app_config *c, bool server)
{
    struct meter m;
    meter_start(&m, c);
    const struct net_if *nif0 = net_if_get(0);
    uint64_t start = m.t0, now = start, segs0, wire0, segs, wire;
    net_if_lwip_wire(nif0, &segs0, &wire0);
    uint64_t stream_last = 0;
    uint64_t end = app_deadline(c, start, server ? IPERF_SERVER_S : IPERF_CLIENT_S);
    if (server && end != UINT64_MAX)
        end += IPERF_GRACE_S * time_tsc_hz;
    uint64_t connect_end = start + IPERF_CONNECT_S * time_tsc_hz;
    for (;;) {
        now = time_cycles();
        if (now >= end)
            break;
        uint64_t wake = m.next < end ? m.next : end; /* the next sample or the end */
        if (!server) {
            if (iperf_client_round(now, connect_end, wake) == iperf_state.n)
                break;
        } else if (iperf_server_round(wake)) {
            break;
        }
        if (meter_due(&m, now)) {
            net_if_lwip_wire(nif0, &segs, &wire);
            struct json *j = meter_sample(&m, now, segs - segs0, wire - wire0);
            uint64_t stream = iperf_stream_bytes(server);
            json_double(j, "goodput_bps", app_per_s((stream - stream_last) * 8, m.span_ns));
            stream_last = stream;
            json_u64(j, "sessions_done", iperf_state.ended.finished);
            json_u64(j, "sessions_aborted", iperf_state.ended.aborted);
            result_end();
        }
    }
    return time_cycles_to_ns(now - start);
}

int app_iperf_main(const struct app_config *c)
{
    bool server = c->role == CFG_ROLE_SERVER;
    ip_addr_t dst;
    _Static_assert(IPERF_MAX_SESS >= 128, "sessions= allows 128");
    apps_peer_addr(c, &dst);
    iperf_setup((unsigned)c->sessions, (uint32_t)c->msg_size, &dst,
                app_config_given(c, "dst_port") ? c->dst_port : IPERF_PORT);
    iperf_state.window = (uint32_t)c->window;
    apps_net_init(c, 1, VNET_OFF_ALL);
    if (server) {
        iperf_server_start();
    } else {
        uint8_t mac[6];
        apps_peer_mac(c, mac);
        iperf_client_start();
    }
    printf("iperf: %s on port %u, %u session%s, msg_size %u\n", server ? "server" : "client",
           iperf_state.port, iperf_state.n, iperf_state.n == 1 ? "" : "s", iperf_state.msg);
    const struct net_if *nif0 = net_if_get(0);
    uint64_t segs0, segs, wire;
    net_if_lwip_wire(nif0, &segs0, &wire);
    uint64_t ns = iperf_run(c, server);
    if (server) {
        iperf_server_stop();
    } else {
        iperf_client_stop();
        iperf_poll_for(IPERF_DRAIN_MS, iperf_client_draining);
    }
    iperf_poll_for(IPERF_LINGER_MS, NULL);
    net_if_lwip_wire(nif0, &segs, &wire);
    iperf_result(c, ns, server, segs - segs0);
    unsigned ok = 0, n = iperf_nsess(server);
    for (unsigned i = 0; i < n; i++)
        ok += iperf_sess_ok(&iperf_state.s[i]);
    if (server && (ok < iperf_state.n || iperf_state.ended.aborted)) {
        printf("iperf: %u of sessions=%u client streams finished", ok, iperf_state.n);
        if (iperf_state.ended.aborted)
            printf(", %u aborted (reset before the client's FIN)", iperf_state.ended.aborted);
        printf("\n");
        return VN_EXIT_TEST_FAILED;
    }
    if (ok < n)
        return server ? VN_EXIT_TEST_FAILED : VN_EXIT_NETWORK;
    return VN_EXIT_OK;
}
