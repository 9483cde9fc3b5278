#include "apps/reneg_stream.h"

#include "apps/app_config.h"
#include "apps/apps_common.h"
#include "apps/apps_net.h"
#include "apps/iperf.h"
#include "drivers/virtio/vnet.h"
#include "kernel/json.h"
#include "kernel/time.h"
#include "net/net.h"

#define RENEG_CLOSE_MS 1000 /* the host's FIN after ours: its iperf closes at once */

unsigned reneg_stream_offloads(const struct app_config *c)
{
    return c->stream_s ? VNET_OFF_ALL : 0;
}

/* Sends until stream_s seconds are over or the session failed. */
static void reneg_stream_send(const struct app_config *c)
{
    uint64_t start = time_cycles();
    uint64_t end = start + (uint64_t)c->stream_s * time_tsc_hz;
    uint64_t connect_end = start + IPERF_CONNECT_S * time_tsc_hz;
    for (uint64_t now = start; now < end; now = time_cycles())
        if (iperf_client_round(now, connect_end, end) > 0)
            return;
}

void reneg_stream_run(const struct app_config *c, struct reneg_stream *out)
{
    ip_addr_t dst;
    apps_peer_addr(c, &dst);
    iperf_setup(1, (uint32_t)c->msg_size, &dst, IPERF_PORT);
    iperf_client_start();
    reneg_stream_send(c);
    iperf_client_stop();
    iperf_poll_for(IPERF_DRAIN_MS, iperf_client_draining);
    iperf_poll_for(RENEG_CLOSE_MS, iperf_client_closing);
    struct iperf_client_count n;
    iperf_client_count(0, &n);
    iperf_client_release();
    *out = (struct reneg_stream){n.bytes, n.ns, n.unacked, n.lport, n.ok};
}

void reneg_stream_json(struct json *j, const struct reneg_stream *out)
{
    json_obj_begin(j, "tcp");
    json_u64(j, "bytes", out->bytes);
    json_u64(j, "duration_ns", out->ns);
    json_double(j, "gbps", app_per_s(out->bytes * 8, out->ns) / 1e9);
    json_u64(j, "unacked", out->unacked);
    json_u64(j, "local_port", out->lport);
    json_bool(j, "ok", out->ok);
    json_obj_end(j);
}
