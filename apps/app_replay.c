/* app=replay: sends the frames of a capture (tools/vnperf run --pcap,
 * handed over as the fw_cfg file opt/vnperf/pcap: apps/pcap_blob.h) as
 * they are, loops= times: at the recorded gaps divided by speed=, at
 * rate=, or flat out (speed=max), tcpreplay's --multiplier, --pps and
 * --topspeed (apps/pcap_sched.h). Frames go through the driver's bound
 * TX slots in bursts of burst=, as gen's do (vnet_txslots_*), copied in
 * whole since each slot's next frame is another one of the capture. The
 * result says how late each frame left against its deadline. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app_config.h"
#include "apps/app_list.h"
#include "apps/apps_common.h"
#include "apps/apps_net.h"
#include "apps/hist.h"
#include "apps/pcap_blob.h"
#include "apps/pcap_sched.h"
#include "apps/stall.h"
#include "kernel/exit.h"
#include "kernel/fwcfg.h"
#include "kernel/result.h"
#include "kernel/time.h"
#include "net/net.h"

#define REPLAY_FILE      "opt/vnperf/pcap"
#define REPLAY_SLOT_ROOM 256 /* at least: lwIP's ARP and ping answers are copied into slots */
#define REPLAY_LIMIT_S   300 /* without duration=: give up after this */
#define REPLAY_DRAIN_MS  1000
#define SERVICE_US       500 /* lwIP timers and TX reclaim between bursts */

static struct replay {
    struct net_if *nif;
    struct pcap_blob blob;
    struct pcap_cursor cur;
    struct pcap_rec next; /* the frame due next */
    struct pcap_sched sched;
    struct vnet_txslots slots;
    uint16_t *lens;
    int burst;
    uint64_t loops, loops_done;
    uint64_t packets, bytes;
    uint64_t first_tx, last_tx; /* cycles of the first and last burst */
    struct hist late;           /* cycles a frame left after its deadline */
} rp;

/* The blob, whole, into the heap: checked before anything is sent. */
static void replay_load(void)
{
    char why[160];
    uint16_t sel;
    uint32_t size;
    int rc = fwcfg_find(REPLAY_FILE, &sel, &size);
    if (rc == -ENOENT)
        vn_fatal(VN_EXIT_CONFIG,
                 "replay: no capture: the fw_cfg file %s is missing (tools/vnperf run --pcap "
                 "FILE)",
                 REPLAY_FILE);
    if (rc < 0)
        vn_fatal(VN_EXIT_DEVICE, "replay: the fw_cfg file directory breaks fw_cfg.rst");
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        vn_fatal(VN_EXIT_OOM, "replay: no memory for the %lu-byte capture (give --memory more)",
                 (unsigned long)size);
    if (fwcfg_read_item(sel, buf, size) < 0)
        vn_fatal(VN_EXIT_DEVICE, "replay: fw_cfg's DMA reported an error reading %s", REPLAY_FILE);
    if (pcap_blob_load(&rp.blob, buf, size, why, sizeof(why)) < 0)
        vn_fatal(VN_EXIT_CONFIG, "replay: %s", why);
}

static void replay_setup(const struct app_config *c, struct rate *rt, uint64_t *micro)
{
    char why[160];
    struct rate r;
    if (rate_parse(c->rate, &r, why, sizeof(why)) < 0 ||
        pcap_speed_parse(c->speed, micro, why, sizeof(why)) < 0)
        vn_fatal(VN_EXIT_CONFIG, "replay: %s", why);
    if (r.unit != RATE_UNLIMITED && app_config_given(c, "speed"))
        vn_fatal(VN_EXIT_CONFIG, "replay: rate= and speed= both given: one sets the timing");
    struct vnet_dev *dev = net_if_dev(rp.nif);
    uint32_t max_frame = vnet_mtu(dev) + 14;
    if (rp.blob.maxlen > max_frame)
        vn_fatal(VN_EXIT_CONFIG,
                 "replay: the capture's largest frame is %u bytes, above the MTU's "
                 "%lu",
                 rp.blob.maxlen, (unsigned long)max_frame);
    uint32_t room = rp.blob.maxlen > REPLAY_SLOT_ROOM ? rp.blob.maxlen : REPLAY_SLOT_ROOM;
    if (net_check(rp.nif, vnet_txslots_bind_q(dev, 0, room, &rp.slots)) < 0)
        vn_fatal(VN_EXIT_DEVICE, "replay: cannot bind the TX ring: frames in flight did not "
                                 "come back");
    rp.burst = (int)c->burst;
    rp.loops = c->loops;
    rp.lens = calloc((size_t)rp.burst, sizeof(*rp.lens));
    if (!rp.lens)
        vn_fatal(VN_EXIT_OOM, "replay: no memory for a burst of %d", rp.burst);
    *rt = r;
    hist_init(&rp.late);
    pcap_blob_rewind(&rp.cur);
    pcap_blob_next(&rp.blob, &rp.cur, &rp.next);
}

/* The schedule from start: the first frame is due then. */
static void replay_start(const struct app_config *c, const struct rate *r, uint64_t micro,
                         uint64_t start)
{
    int rc = pcap_sched_init(&rp.sched, r, micro, rp.blob.span_ns, time_tsc_hz, start);
    if (rc < 0)
        vn_fatal(VN_EXIT_CONFIG, "replay: %s=%s cannot be kept with a %llu Hz TSC%s",
                 r->unit != RATE_UNLIMITED ? "rate" : "speed",
                 r->unit != RATE_UNLIMITED ? c->rate : c->speed, (unsigned long long)time_tsc_hz,
                 rc == -ERANGE ? ": a loop would last over 2^62 cycles" : "");
}

/* One burst of the frames due at now. Returns how many went. */
static int replay_round(uint64_t now)
{
    if (rp.loops_done == rp.loops || !pcap_sched_ready(&rp.sched, now))
        return 0;
    struct vnet_dev *dev = net_if_dev(rp.nif);
    uint16_t first = 0;
    int k = net_check(rp.nif, vnet_txslots_reserve_q(dev, 0, rp.burst, &first));
    if (k < 0)
        vn_fatal(VN_EXIT_INTERNAL, "replay: TX slots: error %d", k);
    int n = 0;
    uint64_t bytes = 0;
    bool timed = rp.sched.mode != PCAP_TOP;
    while (n < k && rp.loops_done < rp.loops && pcap_sched_ready(&rp.sched, now)) {
        if (timed)
            hist_add(&rp.late, now - pcap_sched_when(&rp.sched));
        uint16_t s = (uint16_t)(first + n) & (uint16_t)(rp.slots.num - 1);
        memcpy(rp.slots.frame0 + (size_t)s * rp.slots.stride, rp.next.data, rp.next.len);
        rp.lens[n++] = rp.next.len;
        bytes += rp.next.len;
        bool wrapped = rp.cur.idx == 0; /* the frame just copied was the loop's last */
        rp.loops_done += wrapped;
        uint32_t len = rp.next.len;
        pcap_blob_next(&rp.blob, &rp.cur, &rp.next);
        pcap_sched_sent(&rp.sched, len, rp.next.gap_ns, wrapped);
    }
    if (!n)
        return 0;
    int rc = net_check(rp.nif, vnet_txslots_send_q(dev, 0, n, rp.lens, 0));
    if (rc < 0)
        vn_fatal(VN_EXIT_INTERNAL, "replay: TX slots: error %d", rc);
    if (!rp.packets)
        rp.first_tx = now;
    rp.last_tx = now;
    rp.packets += (uint64_t)n;
    rp.bytes += bytes;
    return n;
}

static const char *replay_mode_name(void)
{
    static const char *const names[] = {
        [PCAP_TIMED] = "timed", [PCAP_RATE] = "rate", [PCAP_TOP] = "top"};
    return names[rp.sched.mode];
}

static void replay_result(const struct app_config *c, uint64_t ns, const struct stall *st)
{
    app_summary("replay", rp.packets, rp.bytes, ns);
    app_hist_lines("late", &rp.late, 1e9 / (double)time_tsc_hz);
    struct json *j = app_result_begin(c, rp.packets, rp.bytes, ns);
    json_str(j, "mode", replay_mode_name());
    json_str(j, "speed", c->speed);
    json_u64(j, "frames", rp.blob.frames);
    json_u64(j, "frame_bytes", rp.blob.bytes);
    json_u64(j, "loops", rp.loops_done);
    json_u64(j, "loops_asked", rp.loops);
    json_u64(j, "span_ns", rp.blob.span_ns);
    json_u64(j, "burst", c->burst);
    /* The first to the last burst: at recorded timing, span_ns x loops
     * over the multiplier, give or take the lateness below. */
    json_u64(j, "sent_span_ns", time_cycles_to_ns(rp.last_tx - rp.first_tx));
    if (rp.late.count) {
        json_obj_begin(j, "late");
        json_u64(j, "frames", rp.late.count);
        json_double(j, "mean_us", (double)app_cycles_ns(rp.late.sum / rp.late.count) / 1e3);
        json_double(j, "p50_us", (double)app_cycles_ns(hist_quantile(&rp.late, 0.5)) / 1e3);
        json_double(j, "p99_us", (double)app_cycles_ns(hist_quantile(&rp.late, 0.99)) / 1e3);
        json_double(j, "max_us", (double)app_cycles_ns(rp.late.max) / 1e3);
        json_obj_end(j);
    }
    stall_json(j, st, time_tsc_hz);
    app_result_end(j);
}

/* Until every frame sent is back from the device (so the driver's counts
 * are the wire's), at most REPLAY_DRAIN_MS. */
static void replay_drain(void)
{
    uint64_t end = time_cycles() + time_ns_to_cycles(REPLAY_DRAIN_MS * 1000000ull);
    struct vnet_dev *dev = net_if_dev(rp.nif);
    while (time_cycles() < end) {
        net_poll();
        net_check(rp.nif, vnet_tx_reclaim_q(dev, 0));
        if (vnet_tx_in_flight_q(dev, 0) == 0)
            break;
    }
}

int app_replay_main(const struct app_config *c)
{
    apps_net_init(c, 1, 0);
    rp.nif = net_if_get(0);
    replay_load();
    struct rate r;
    uint64_t micro;
    replay_setup(c, &r, &micro);
    printf("replay: %lu frames (%llu bytes, %llu ns recorded), %llu loop%s, %s\n",
           (unsigned long)rp.blob.frames, (unsigned long long)rp.blob.bytes,
           (unsigned long long)rp.blob.span_ns, (unsigned long long)rp.loops,
           rp.loops > 1 ? "s" : "", c->rate[0] ? c->rate : c->speed);
    struct meter m;
    meter_start(&m, c);
    uint64_t start = m.t0, now = start;
    replay_start(c, &r, micro, start);
    uint64_t end = app_deadline(c, start, REPLAY_LIMIT_S);
    uint64_t service_every = time_ns_to_cycles(SERVICE_US * 1000u), next_service = start;
    struct stall st;
    app_stall_start(&st);
    while (rp.loops_done < rp.loops) {
        now = time_cycles();
        stall_round(&st, now);
        if (now >= end)
            break;
        int n = replay_round(now);
        if (n == 0 || now >= next_service) {
            net_poll();
            next_service = now + service_every;
        }
        if (n == 0 && !pcap_sched_ready(&rp.sched, now)) {
            uint64_t wake = pcap_sched_when(&rp.sched);
            wake = wake < m.next ? wake : m.next;
            stall_skip(&st, net_idle(wake < end ? wake : end));
        }
        if (meter_due(&m, now)) {
            json_u64(meter_sample(&m, now, rp.packets, rp.bytes), "loops", rp.loops_done);
            meter_end(&m, &st);
        }
    }
    uint64_t ns = time_cycles_to_ns(now - start);
    replay_drain();
    replay_result(c, ns, &st);
    if (rp.loops_done < rp.loops && !c->duration_s) {
        printf("replay: %llu of loops=%llu within %d s\n", (unsigned long long)rp.loops_done,
               (unsigned long long)rp.loops, REPLAY_LIMIT_S);
        return VN_EXIT_TIMEOUT;
    }
    return VN_EXIT_OK;
}
