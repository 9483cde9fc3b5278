/* app=reneg: several feature sets in one boot (sets=, apps/reneg_sets.h).
 * For each set in turn: the device reset and negotiated again with it
 * (net_if_renegotiate: virtio 1.2 s2.4, s3.1.1), the control commands
 * of the line sent again (apps_ctrl_apply), then count= frames of size=
 * bytes to dst_ip= on stream id = the set's index (from 0), so that the
 * host peer counts each set apart (docs/peer.md), and the TX ring drained
 * before the next reset, its driver's counters one sample line. The
 * result lists every set with the features it negotiated and the frames
 * it sent (docs/apps.md). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/app_config.h"
#include "apps/app_list.h"
#include "apps/apps_common.h"
#include "apps/apps_ctrl.h"
#include "apps/apps_net.h"
#include "apps/reneg_sets.h"
#include "kernel/exit.h"
#include "kernel/json.h"
#include "kernel/kernel.h"
#include "kernel/result.h"
#include "kernel/time.h"
#include "lwip/def.h"
#include "net/net.h"
#include "net/pkt.h"

#define RENEG_BURST      32
#define RENEG_SEND_LIMIT 60   /* s: one set's frames, else VN_EXIT_TIMEOUT */
#define RENEG_DRAIN_MS   1000 /* the device gives every frame back before the reset */

struct reneg_out {
    uint64_t features; /* negotiated */
    const char *ring_format;
    uint64_t packets, bytes, ns;
};

static uint8_t reneg_master[PKT_MAX_FRAME];

static int reneg_up(struct net_if *nif, const struct app_config *c, const struct reneg_set *s,
                    unsigned k)
{
    struct vnet_params p;
    char why[320];
    if (apps_vnet_params(c, &p, why, sizeof(why)) < 0)
        vn_fatal(VN_EXIT_CONFIG, "config: %s", why);
    p.features_off = s->features_off;
    p.indirect = s->indirect;
    int r = net_if_renegotiate(nif, &p);
    if (r == -EOPNOTSUPP)
        vn_fatal(VN_EXIT_CONFIG,
                 "config: sets= set %u (%s): indirect:on, and the device does not offer "
                 "VIRTIO_F_INDIRECT_DESC",
                 k + 1, s->text);
    if (r == -ETIMEDOUT || r == -EIO)
        apps_device_error(net_if_dev(nif));
    if (r < 0)
        vn_fatal(VN_EXIT_DEVICE, "reneg: set %u (%s): bring-up failed (%d)", k + 1, s->text, r);
    apps_ctrl_apply(c, nif);
    printf("reneg: set %u (%s): reset and negotiated again, ring %s\n", k + 1, s->text,
           vnet_ring_format(net_if_dev(nif)));
    return 0;
}

/* Slots reserved from first, k of them, filled from the template. */
static void reneg_fill(const struct vnet_txslots *ts, uint16_t first, int k,
                       const struct pkt_tmpl *t, uint64_t *seq, uint16_t *lens)
{
    for (int j = 0; j < k; j++) {
        uint8_t *f = ts->frame0 + (size_t)((first + j) % ts->num) * ts->stride;
        memcpy(f, reneg_master, t->len);
        pkt_patch(f, t, (*seq)++, time_cycles());
        lens[j] = t->len;
    }
}

static void reneg_drain(struct net_if *nif)
{
    struct vnet_dev *d = net_if_dev(nif);
    uint64_t end = time_ns() + RENEG_DRAIN_MS * 1000000ull;
    while (vnet_tx_in_flight(d) > 0) {
        net_check(nif, vnet_tx_reclaim(d));
        net_service();
        if (time_ns() > end)
            vn_fatal(VN_EXIT_DEVICE, "reneg: %s: %d TX frames not given back within %d ms",
                     vnet_name(d), vnet_tx_in_flight(d), RENEG_DRAIN_MS);
    }
}

/* count= frames on stream id k through bound slots, then the ring drained. */
static void reneg_send(struct net_if *nif, const struct app_config *c, const uint8_t dst_mac[6],
                       unsigned k, struct reneg_out *o)
{
    struct vnet_dev *d = net_if_dev(nif);
    struct vnet_txslots ts;
    if (net_check(nif, vnet_txslots_bind(d, 0, &ts)) < 0)
        vn_fatal(VN_EXIT_DEVICE, "reneg: %s: TX slots not bound (frames in flight)", vnet_name(d));
    if (c->size > ts.room || c->size > PKT_MAX_FRAME)
        vn_fatal(VN_EXIT_CONFIG, "config: size=%llu: larger than the device's frames (%u)",
                 (unsigned long long)c->size, ts.room);
    struct pkt_flow fl = {net_ip(), lwip_ntohl(c->dst_ip), c->src_port, c->dst_port, k};
    struct pkt_tmpl t;
    if (pkt_tmpl_build(reneg_master, (uint16_t)c->size, dst_mac, net_if_mac(nif), &fl, &t) < 0)
        vn_fatal(VN_EXIT_INTERNAL, "reneg: no frame template for size %llu",
                 (unsigned long long)c->size);
    uint16_t lens[RENEG_BURST];
    uint64_t seq = 0, start = time_ns();
    while (seq < c->count) {
        uint64_t left = c->count - seq;
        uint16_t first;
        int k2 = net_check(
            nif, vnet_txslots_reserve(d, left < RENEG_BURST ? (int)left : RENEG_BURST, &first));
        reneg_fill(&ts, first, k2, &t, &seq, lens);
        net_check(nif, vnet_txslots_send(d, k2, lens, 0));
        net_service();
        if (time_ns() - start > RENEG_SEND_LIMIT * 1000000000ull)
            vn_fatal(VN_EXIT_TIMEOUT, "reneg: set %u: sent %llu of count=%llu within %d s", k + 1,
                     (unsigned long long)seq, (unsigned long long)c->count, RENEG_SEND_LIMIT);
    }
    reneg_drain(nif);
    o->ns = time_ns() - start;
    o->packets = seq;
    o->bytes = seq * t.len;
}

/* One "sample" line per set as it ends, before the next reset starts the
 * driver's counters anew: the set's index, frames and the driver's
 * counters of its bring-up (vnperf conform judges each set by them). */
static void reneg_sample(struct net_if *nif, unsigned k, const struct reneg_out *o)
{
    struct json *j = result_begin("sample");
    json_str(j, "app", "reneg");
    json_u64(j, "set", k);
    json_u64(j, "packets", o->packets);
    json_u64(j, "bytes", o->bytes);
    json_obj_begin(j, "vnet");
    vnet_stats_json(net_if_dev(nif), j);
    json_obj_end(j);
    result_end();
}

/* The app's result: every set's frames added up, then each set's own;
 * vnet is the last bring-up's (a reset starts the driver's counters anew). */
static void reneg_result(const struct app_config *c, const struct reneg_set *sets,
                         const struct reneg_out *out, unsigned n)
{
    uint64_t packets = 0, bytes = 0, ns = 0;
    for (unsigned k = 0; k < n; k++) {
        packets += out[k].packets;
        bytes += out[k].bytes;
        ns += out[k].ns;
    }
    struct json *j = app_result_begin(c, packets, bytes, ns);
    uint64_t lp, lb; /* lwIP's frames (ARP) left too: the host counts every frame */
    net_lwip_sent(&lp, &lb);
    json_u64(j, "tx_packets", packets + lp);
    json_u64(j, "tx_bytes", bytes + lb);
    json_arr_begin(j, "sets");
    for (unsigned k = 0; k < n; k++) {
        json_obj_begin(j, NULL);
        json_str(j, "set", sets[k].text);
        json_u64(j, "stream", k);
        vnet_features_json(j, "features", out[k].features);
        json_str(j, "ring_format", out[k].ring_format);
        json_u64(j, "packets", out[k].packets);
        json_u64(j, "bytes", out[k].bytes);
        json_u64(j, "duration_ns", out[k].ns);
        json_obj_end(j);
    }
    json_arr_end(j);
    app_result_end(j);
}

int app_reneg_main(const struct app_config *c)
{
    static struct reneg_set sets[RENEG_SETS_MAX];
    static struct reneg_out out[RENEG_SETS_MAX];
    char why[320];
    int n = reneg_sets_parse(c->sets, sets, RENEG_SETS_MAX, why, sizeof(why));
    if (n < 0)
        vn_fatal(VN_EXIT_CONFIG, "config: sets=%s: %s", c->sets, why);
    if (c->count == 0)
        vn_fatal(VN_EXIT_CONFIG, "config: app=reneg: count= (frames per set) is required");
    apps_net_init(c, 1, 0);
    struct net_if *nif = net_if_get(0);
    uint8_t dst_mac[6];
    apps_dst_mac(c, dst_mac);
    for (unsigned k = 0; k < (unsigned)n; k++) {
        reneg_up(nif, c, &sets[k], k);
        out[k].features = vnet_features(net_if_dev(nif));
        out[k].ring_format = vnet_ring_format(net_if_dev(nif));
        reneg_send(nif, c, dst_mac, k, &out[k]);
        reneg_sample(nif, k, &out[k]);
        printf("reneg: set %u (%s): %llu frames sent on stream %u\n", k + 1, sets[k].text,
               (unsigned long long)out[k].packets, k);
    }
    reneg_result(c, sets, out, (unsigned)n);
    return VN_EXIT_OK;
}
