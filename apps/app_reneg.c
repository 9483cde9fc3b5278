/* app=reneg: several feature sets in one boot (sets=, apps/reneg_sets.h).
 * For each set in turn: the device reset and negotiated again with it
 * (net_if_renegotiate: virtio 1.2 s2.4, s3.1.1), the control commands
 * of the line sent again (apps_ctrl_apply), then count= frames of size=
 * bytes to dst_ip= on stream id = the set's index (from 0), so that the
 * host peer counts each set apart (docs/peer.md), and the TX ring drained
 * before the next reset, its driver's counters one sample line. With
 * back=1 the host peer reflects every frame: count= frames of the MTU's
 * size follow, the set's own count takes what comes back
 * (apps/reneg_rx.h), at most RENEG_WINDOW of a set's frames are out and
 * not back at once, and the set's last frames are awaited back before the
 * reset. With stream_s= a TCP stream comes first (apps/reneg_stream.h), the
 * driver's offloads then app iperf's for every set. With uso= a set that
 * negotiated HOST_USO sends count= USO datagrams after its frames, each
 * segment stamped on stream id the set's index + RENEG_USO_STREAM
 * (apps/reneg_uso.h). The result lists every set with the features it
 * negotiated and the frames it sent (and got back, its stream's bytes,
 * its USO segments); the driver's counters of a set's bring-up are its
 * sample line only (the runner puts them in the set's entry,
 * docs/apps.md). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/app_config.h"
#include "apps/app_list.h"
#include "apps/apps_common.h"
#include "apps/apps_ctrl.h"
#include "apps/apps_net.h"
#include "apps/gen_uso.h"
#include "apps/reneg_rx.h"
#include "apps/reneg_sets.h"
#include "apps/reneg_stream.h"
#include "apps/reneg_uso.h"
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
#define RENEG_WINDOW     32   /* a set's frames out and not back: inside QEMU's socket buffer */
#define RENEG_BACK_MS    1000 /* no frame back for this long: the ones out are lost */

struct reneg_out {
    uint64_t features; /* negotiated */
    const char *ring_format;
    uint16_t sizes[2]; /* size=, then with back=1 the MTU's frame */
    unsigned nsizes;
    uint64_t packets, bytes, ns;
    struct reneg_stream stream; /* stream_s= */
    bool uso;                   /* uso= and HOST_USO negotiated: USO datagrams sent */
    uint16_t uso_len;           /* their frame's length */
    uint64_t uso_datagrams;
    struct vnet_counts took; /* the frames the driver took, just before the next reset */
};

/* One set's sending: its stream, its frames so far, those given up. */
struct reneg_job {
    struct net_if *nif;
    struct vnet_txslots ts;
    unsigned k;
    bool back;     /* back=: the host end sends every frame back */
    uint64_t seq;  /* frames sent on stream k */
    uint64_t gone; /* of those, taken for lost: a window that did not move */
    uint64_t start;
};

static uint8_t reneg_master[PKT_MAX_FRAME];
static struct reneg_rx reneg_back[RENEG_SETS_MAX];
static unsigned reneg_nsets;

/* The driver's offloads: app iperf's with stream_s=, checksum and UDP
 * segmentation with uso= (gen's). */
static unsigned reneg_offloads(const struct app_config *c)
{
    return reneg_stream_offloads(c) | gen_uso_offloads(c);
}

static int reneg_up(struct net_if *nif, const struct app_config *c, const struct reneg_set *s,
                    unsigned k)
{
    struct vnet_params p;
    char why[320];
    if (apps_vnet_params(c, &p, why, sizeof(why)) < 0)
        vn_fatal(VN_EXIT_CONFIG, "config: %s", why);
    p.offloads = (uint8_t)reneg_offloads(c);
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

/* Every frame on the RX ring while set cur runs: counted (reneg_rx.h)
 * or lwIP's. */
static void reneg_poll(struct net_if *nif, unsigned cur)
{
    struct vnet_dev *d = net_if_dev(nif);
    struct vnet_rx rx[NET_RX_BATCH];
    int n;
    while ((n = net_check(nif, vnet_rx_burst(d, rx, NET_RX_BATCH))) > 0)
        for (int i = 0; i < n; i++) {
            if (reneg_rx_frame(reneg_back, reneg_nsets, cur, rx[i].frame, rx[i].len) ==
                RENEG_COUNTED)
                vnet_rx_release(d, rx[i].buf);
            else
                net_input(nif, &rx[i]);
        }
}

/* Until fewer than room of set k's frames are out and not back; when
 * none comes back for RENEG_BACK_MS those out are taken for lost (the
 * result's counts say so) and the set goes on. */
static void reneg_wait_back(struct reneg_job *jb, uint64_t room)
{
    const struct reneg_rx *r = &reneg_back[jb->k];
    uint64_t back = r->packets, since = time_ns();
    if (!jb->back)
        return;
    /* frames given up may still come: more back than awaited ends it too */
    while (jb->seq - jb->gone > r->packets && jb->seq - jb->gone - r->packets >= room) {
        reneg_poll(jb->nif, jb->k);
        net_service();
        if (r->packets != back) {
            back = r->packets;
            since = time_ns();
        } else if (time_ns() - since > RENEG_BACK_MS * 1000000ull) {
            jb->gone = jb->seq - r->packets;
        }
    }
}

/* With back=1 the boot's own frames (lwIP's ARP) come back from the
 * peer too: taken before the first reset (within RENEG_BACK_MS), so that
 * none is lost with the ring; the bring-up's counters then. */
static void reneg_boot_back(struct net_if *nif, bool back, struct vnet_counts *boot)
{
    uint64_t lp, lb, end = back ? time_ns() + RENEG_BACK_MS * 1000000ull : 0;
    do {
        reneg_poll(nif, 0);
        net_service(); /* lwIP's queued frames (its answers too) out */
        net_lwip_sent(&lp, &lb);
        vnet_counts(net_if_dev(nif), boot);
    } while (boot->rx_packets < lp && time_ns() < end);
}

static void reneg_drain(struct net_if *nif, unsigned k)
{
    struct vnet_dev *d = net_if_dev(nif);
    uint64_t end = time_ns() + RENEG_DRAIN_MS * 1000000ull;
    while (vnet_tx_in_flight(d) > 0) {
        net_check(nif, vnet_tx_reclaim(d));
        reneg_poll(nif, k);
        net_service();
        if (time_ns() > end)
            vn_fatal(VN_EXIT_DEVICE, "reneg: %s: %d TX frames not given back within %d ms",
                     vnet_name(d), vnet_tx_in_flight(d), RENEG_DRAIN_MS);
    }
}

/* count= frames of size bytes on stream k through the bound slots, the
 * sequence numbers going on from the set's last size. */
static void reneg_send_size(struct reneg_job *jb, const struct app_config *c,
                            const uint8_t dst_mac[6], uint16_t size, struct reneg_out *o)
{
    struct vnet_dev *d = net_if_dev(jb->nif);
    struct pkt_flow fl = {net_ip(), lwip_ntohl(c->dst_ip), c->src_port, c->dst_port, jb->k};
    struct pkt_tmpl t;
    if (pkt_tmpl_build(reneg_master, size, dst_mac, net_if_mac(jb->nif), &fl, &t) < 0)
        vn_fatal(VN_EXIT_INTERNAL, "reneg: no frame template for size %u", (unsigned)size);
    uint16_t lens[RENEG_BURST];
    uint64_t end = jb->seq + c->count;
    while (jb->seq < end) {
        reneg_wait_back(jb, RENEG_WINDOW);
        uint64_t left = end - jb->seq;
        uint16_t first;
        int k2 = net_check(
            jb->nif, vnet_txslots_reserve(d, left < RENEG_BURST ? (int)left : RENEG_BURST, &first));
        reneg_fill(&jb->ts, first, k2, &t, &jb->seq, lens);
        net_check(jb->nif, vnet_txslots_send(d, k2, lens, 0));
        net_service();
        if (time_ns() - jb->start > RENEG_SEND_LIMIT * 1000000000ull)
            vn_fatal(VN_EXIT_TIMEOUT, "reneg: set %u: sent %llu of %llu within %d s", jb->k + 1,
                     (unsigned long long)jb->seq, (unsigned long long)(o->nsizes * c->count),
                     RENEG_SEND_LIMIT);
    }
    o->bytes += c->count * t.len;
}

/* Set k's count= USO datagrams (reneg_uso.h) through the bound slots,
 * which carry the USO header from here on (gen_uso_bind): the set's
 * frames before them went without. Not awaited back: the host peer
 * leaves them to the host's stack, which gets each segment. */
static void reneg_send_uso(struct reneg_job *jb, const struct app_config *c,
                           const uint8_t dst_mac[6], struct reneg_out *o)
{
    struct vnet_dev *d = net_if_dev(jb->nif);
    uint32_t payload = reneg_uso_payload(c->uso);
    struct pkt_flow fl = {net_ip(), lwip_ntohl(c->dst_ip), c->src_port, c->dst_port,
                          jb->k + RENEG_USO_STREAM};
    struct pkt_tmpl t;
    o->uso_len = (uint16_t)(PKT_HDRS_LEN + payload);
    if (pkt_tmpl_build(reneg_master, o->uso_len, dst_mac, net_if_mac(jb->nif), &fl, &t) < 0)
        vn_fatal(VN_EXIT_INTERNAL, "reneg: no frame template for uso=%u", (unsigned)c->uso);
    gen_uso_bind(jb->nif, 0, reneg_master, o->uso_len, c->uso);
    uint16_t lens[RENEG_BURST];
    uint64_t seq = 0, start = time_ns();
    while (o->uso_datagrams < c->count) {
        uint64_t left = c->count - o->uso_datagrams;
        uint16_t first;
        int n = net_check(
            jb->nif, vnet_txslots_reserve(d, left < RENEG_BURST ? (int)left : RENEG_BURST, &first));
        uint64_t tsc = time_cycles();
        for (int j = 0; j < n; j++) {
            uint8_t *f = jb->ts.frame0 + (size_t)((first + j) % jb->ts.num) * jb->ts.stride;
            memcpy(f, reneg_master, o->uso_len);
            seq += reneg_uso_stamp(f + OFF_PAYLOAD, payload, c->uso, fl.stream, seq, tsc);
            lens[j] = o->uso_len;
        }
        net_check(jb->nif, vnet_txslots_send(d, n, lens, 0));
        net_service();
        o->uso_datagrams += (uint64_t)n;
        if (time_ns() - start > RENEG_SEND_LIMIT * 1000000000ull)
            vn_fatal(VN_EXIT_TIMEOUT, "reneg: set %u: sent %llu of %llu USO datagrams within %d s",
                     jb->k + 1, (unsigned long long)o->uso_datagrams, (unsigned long long)c->count,
                     RENEG_SEND_LIMIT);
    }
}

/* The MTU's frame: the device's MTU and Ethernet's header, within the
 * slots and the template's limit. */
static uint16_t reneg_mtu_frame(const struct vnet_dev *d, uint32_t room)
{
    uint32_t len = vnet_mtu(d) + ETH_HLEN;
    if (len > room)
        len = room;
    return (uint16_t)(len > PKT_MAX_FRAME ? PKT_MAX_FRAME : len);
}

/* Set k's frames of each size, then the ring drained (with back=1 every
 * frame back, or given up), then the driver's counters of the set. */
static void reneg_send(struct net_if *nif, const struct app_config *c, const uint8_t dst_mac[6],
                       unsigned k, struct reneg_out *o)
{
    struct vnet_dev *d = net_if_dev(nif);
    struct reneg_job jb = {.nif = nif, .k = k, .back = c->back};
    /* USO datagrams need slots past the MTU's frame */
    if (net_check(nif, vnet_txslots_bind(d, o->uso ? PKT_MAX_FRAME : 0, &jb.ts)) < 0)
        vn_fatal(VN_EXIT_DEVICE, "reneg: %s: TX slots not bound (frames in flight)", vnet_name(d));
    o->sizes[0] = (uint16_t)c->size;
    o->sizes[1] = reneg_mtu_frame(d, jb.ts.room);
    if (c->size > o->sizes[1])
        vn_fatal(VN_EXIT_CONFIG, "config: size=%llu: larger than the MTU's frame (%u)",
                 (unsigned long long)c->size, (unsigned)o->sizes[1]);
    o->nsizes = c->back && o->sizes[1] != o->sizes[0] ? 2 : 1;
    jb.start = time_ns();
    for (unsigned s = 0; s < o->nsizes; s++)
        reneg_send_size(&jb, c, dst_mac, o->sizes[s], o);
    reneg_drain(nif, k);
    reneg_wait_back(&jb, 1);
    o->ns = time_ns() - jb.start;
    o->packets = jb.seq;
    if (o->uso) {
        reneg_send_uso(&jb, c, dst_mac, o);
        reneg_drain(nif, k);
    }
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

/* Set k's "uso" object: the datagrams' shape (gen's keys), how many it
 * sent and their segments, their stream id, and whether the set
 * negotiated HOST_USO (false: none sent). */
static void reneg_uso_json(struct json *j, uint16_t uso, unsigned k, const struct reneg_out *o)
{
    json_obj_begin(j, "uso");
    uint32_t segs = gen_uso_shape_json(j, uso, (uint16_t)(PKT_HDRS_LEN + reneg_uso_payload(uso)));
    json_u64(j, "datagrams", o->uso_datagrams);
    json_u64(j, "segments", o->uso_datagrams * segs);
    json_u64(j, "stream", k + RENEG_USO_STREAM);
    json_bool(j, "host_uso", o->uso);
    json_obj_end(j);
}

/* The app's result: every set's frames added up, then each set's own:
 * sent and back (its driver's counters are its sample line's); vnet is
 * the last bring-up's (a reset starts the driver's counters anew). */
static void reneg_result(const struct app_config *c, const struct reneg_set *sets,
                         const struct reneg_out *out, unsigned n, const struct vnet_counts *boot)
{
    uint64_t packets = 0, bytes = 0, ns = 0, up = 0, ub = 0;
    for (unsigned k = 0; k < n; k++) {
        packets += out[k].packets;
        bytes += out[k].bytes;
        ns += out[k].ns;
        up += out[k].uso_datagrams;
        ub += out[k].uso_datagrams * out[k].uso_len;
    }
    struct json *j = app_result_begin(c, packets, bytes, ns);
    /* lwIP's frames (ARP) too, each USO datagram one frame, and those the
     * boot's bring-up took: the host counts every frame */
    uint64_t lp, lb, rp = boot->rx_packets, rb = boot->rx_bytes;
    net_lwip_sent(&lp, &lb);
    json_u64(j, "tx_packets", packets + up + lp);
    json_u64(j, "tx_bytes", bytes + ub + lb);
    for (unsigned k = 0; k < n; k++) {
        rp += out[k].took.rx_packets;
        rb += out[k].took.rx_bytes;
    }
    json_u64(j, "rx_packets", rp); /* each reset zeroes the driver's count */
    json_u64(j, "rx_bytes", rb);
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
        json_arr_begin(j, "frame_sizes");
        for (unsigned s = 0; s < out[k].nsizes; s++)
            json_u64(j, NULL, out[k].sizes[s]);
        json_arr_end(j);
        if (c->back)
            reneg_rx_json(j, "rx", &reneg_back[k]);
        if (c->stream_s)
            reneg_stream_json(j, &out[k].stream);
        if (c->uso)
            reneg_uso_json(j, c->uso, k, &out[k]);
        json_obj_end(j);
    }
    json_arr_end(j);
    app_result_end(j);
}

/* The set's console line: its frames (and back), its stream. */
static void reneg_set_line(const struct app_config *c, const struct reneg_set *s, unsigned k,
                           const struct reneg_out *o)
{
    printf("reneg: set %u (%s): %llu frames sent on stream %u", k + 1, s->text,
           (unsigned long long)o->packets, k);
    if (c->back)
        printf(", %llu back", (unsigned long long)reneg_back[k].packets);
    if (c->stream_s)
        printf(", TCP stream %llu bytes in %.3f s (%.3f Gbit/s)%s",
               (unsigned long long)o->stream.bytes, (double)o->stream.ns / 1e9,
               app_per_s(o->stream.bytes * 8, o->stream.ns) / 1e9, o->stream.ok ? "" : ", failed");
    if (c->uso && o->uso)
        printf(", %llu USO datagrams on stream %u", (unsigned long long)o->uso_datagrams,
               k + RENEG_USO_STREAM);
    else if (c->uso)
        printf(", no USO datagrams (HOST_USO not negotiated)");
    printf("\n");
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
        vn_fatal(VN_EXIT_CONFIG,
                 "config: app=reneg: count= (frames of each size per set) is required");
    if (c->uso && reneg_uso_payload(c->uso) == 0)
        vn_fatal(VN_EXIT_CONFIG,
                 "config: uso=%u: app=reneg takes %u to %u (each segment of its %u-byte datagrams "
                 "starts with the %u-byte payload header, two segments at least)",
                 (unsigned)c->uso, PL_LEN, RENEG_USO_PAYLOAD - PL_LEN, RENEG_USO_PAYLOAD, PL_LEN);
    reneg_nsets = (unsigned)n;
    unsigned failed = 0;
    apps_net_init(c, 1, reneg_offloads(c));
    struct net_if *nif = net_if_get(0);
    uint8_t dst_mac[6];
    apps_dst_mac(c, dst_mac);
    struct vnet_counts boot;
    reneg_boot_back(nif, c->back, &boot);
    for (unsigned k = 0; k < (unsigned)n; k++) {
        reneg_up(nif, c, &sets[k], k);
        out[k].features = vnet_features(net_if_dev(nif));
        out[k].ring_format = vnet_ring_format(net_if_dev(nif));
        out[k].uso = c->uso && (vnet_offloads(net_if_dev(nif)) & VNET_OFF_TX_USO);
        if (c->uso)
            gen_uso_mtu_check(c, nif);
        /* the stream first: its offloaded frames go on the queue before
         * reneg_send binds its TX slots, which take none (vnet.h) */
        if (c->stream_s)
            reneg_stream_run(c, &out[k].stream);
        reneg_send(nif, c, dst_mac, k, &out[k]);
        vnet_counts(net_if_dev(nif), &out[k].took);
        reneg_sample(nif, k, &out[k]);
        reneg_set_line(c, &sets[k], k, &out[k]);
        failed += c->stream_s && !out[k].stream.ok;
    }
    reneg_result(c, sets, out, (unsigned)n, &boot);
    if (failed) {
        printf("reneg: %u of %d sets' TCP streams failed\n", failed, n);
        return VN_EXIT_NETWORK;
    }
    return VN_EXIT_OK;
}
