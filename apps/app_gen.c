/* app=gen: UDP packet generator.
 *
 * path=raw (default): a stream file, and the config line's shorthand
 * (size=, imix=, rate=, flows=, uso=: one stream, flows= its flow var),
 * go through the stream engine (apps/gen_streams.h, docs/streams.md),
 * which writes the frames straight into the driver's bound TX slots
 * (vnet_txslots_*), in bursts of burst=. With queues= above 1 each flow
 * goes out on the pair its replies come back on (vnet_flow_pair: the
 * device's RSS hash of the reply), a burst per pair in turn from that
 * pair's flows (its walk), each pair with its own bound slots. With vcpus=
 * above 1 the pairs are shared out over the CPUs (pair k with flows to
 * CPU k mod the CPUs sending; with queues= equal to vcpus= the pair index
 * is the CPU index): each CPU sends its share of count= on its own pairs
 * with its own slots, burst buffer, walks, copy of the stream (its share
 * of rate=) and counts (struct gen_cpu), no lock anywhere; CPU 0 also
 * receives, runs lwIP and prints the samples, and the per-CPU counts are
 * added up at the end.
 * path=stack: the same payload through lwIP's udp_sendto, to measure what
 * the stack costs: lwIP builds those frames, not the engine (docs/apps.md),
 * so the sizes, flows and the TSC pacer here are its.
 *
 * Frames that come back, on any NIC (a reflector swapping addresses and
 * ports, or a forwarder passing them on unchanged: PVP with a second NIC)
 * are counted with loss/dup/reorder and a latency histogram from their TSC
 * stamps, which are ours. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app_config.h"
#include "apps/app_list.h"
#include "apps/apps_common.h"
#include "apps/apps_net.h"
#include "apps/flows.h"
#include "apps/gen_streams.h"
#include "apps/gen_uso.h"
#include "apps/hist.h"
#include "apps/imix.h"
#include "apps/percpu.h"
#include "apps/qstats.h"
#include "apps/rate.h"
#include "apps/seqtrack.h"
#include "apps/stall.h"
#include "kernel/exit.h"
#include "kernel/irq.h"
#include "kernel/result.h"
#include "kernel/smp.h"
#include "kernel/time.h"
#include "lwip/pbuf.h"
#include "lwip/udp.h"
#include "net/net.h"
#include "net/pkt.h"

#define GEN_SLOT_ROOM     256 /* at least: lwIP's ARP and ping answers are copied into slots */
#define GEN_DEFAULT_S     10  /* duration when neither count= nor duration= */
#define GEN_COUNT_LIMIT_S 300 /* count= without duration=: give up after this */
#define GEN_DRAIN_MS      1000
#define SERVICE_US        500 /* lwIP timers and TX reclaim while paced */

/* A TX pair, the flows it carries (its walk over them) and its counts. */
struct gen_pair {
    unsigned q;
    struct stream_flow_walk walk;
    struct vnet_txslots slots;
    uint64_t packets, bytes, dropped;
};

/* One sending CPU: its pairs and the burst being built on one of them, its
 * share of count= and its counts. Written by that CPU only; CPU 0 reads
 * the counts for a sample (each an aligned load) and adds them up once
 * the CPU is done. */
struct gen_cpu {
    struct gen_pair pairs[VNET_MAX_PAIRS];
    unsigned npairs;
    struct gen_pair *cur;      /* the pair of the burst being built */
    struct vnet_txslots slots; /* cur's */
    uint16_t *lens;            /* per frame of a burst */
    unsigned imix_pos;         /* path=stack's */
    struct pacer pc;           /* path=stack's */
    uint64_t count, sent, packets, bytes, dropped;
    uint64_t build_cycles;                /* spent building frames (raw path) */
    uint64_t cls_packets[IMIX_MAX_SIZES]; /* path=stack's */
    uint32_t done;                        /* an AP's last store (release) */
} __attribute__((aligned(64)));

static struct gen {
    struct net_if *nif;
    unsigned ncls;
    struct imix mix;   /* the sizes (classes) and weights */
    unsigned nstreams; /* the stream engine's (apps/gen_streams.h); 0: path=stack */
    bool file;         /* the streams are a stream file's, not the shorthand's */
    bool rx_only;      /* a file of rx streams only: gen receives, sends nothing */
    uint8_t imix_seq[IMIX_MAX_WEIGHT];
    unsigned imix_cycle;
    struct pkt_flow *flows;
    unsigned nflows;
    bool random;
    uint64_t seed;
    struct gen_cpu cpu[SMP_MAX_CPUS];
    unsigned ncpu;   /* CPUs sending: 1 .. smp_cpus_up() */
    uint16_t *order; /* flow indices by pair */
    uint16_t maxlen; /* of all frames */
    uint64_t *seq;   /* path=stack: next sequence number per flow */
    bool drop;       /* txfull=drop: frames the ring cannot take are counted, not waited for */
    uint16_t uso;    /* uso=: the device cuts each frame, finishing its checksum */
    int burst;
    uint64_t end; /* TSC deadline of the sending */
    bool halt;    /* notify=irq|hybrid: a paced CPU halts until its next departure */
    /* added up at the end */
    uint64_t packets, bytes, dropped, nomem, build_cycles;
    uint64_t cls_packets[IMIX_MAX_SIZES];
    bool qreset_done; /* qreset_at= */
    /* reflected frames */
    struct seq_stream *rx_streams;
    struct hist lat; /* cycles */
    uint64_t rx_packets, rx_bytes, rx_bad, rx_future_ts;
    uint64_t wire_rx, wire_rx_bytes; /* every frame received on the first NIC */
} gen_state;

/* path=stack's next size. */
static inline unsigned next_class(struct gen_cpu *w)
{
    if (gen_state.ncls == 1)
        return 0;
    unsigned c = gen_state.imix_seq[w->imix_pos++];
    if (w->imix_pos == gen_state.imix_cycle)
        w->imix_pos = 0;
    return c;
}

/* Frames counted by the stream engine's ids (a file's, rx streams only
 * too, or the shorthand's one flow), not by the flows (the flow var's
 * stream ids, path=stack's). */
static inline bool gen_by_stream(void)
{
    return (gen_state.nstreams && gen_state.nflows == 1) || gen_state.file;
}

/* A frame that carries our own header back: a reflector's answer. */
static void gen_account_return(const uint8_t *pl, uint32_t plen, uint32_t frame_len, uint64_t now)
{
    uint32_t stream = plen >= PL_LEN ? rdle32(pl + PL_OFF_STREAM) : rdle16(pl + PL_OFF_STREAM);
    gen_state.rx_packets++;
    gen_state.rx_bytes += frame_len;
    if (stream >= (gen_by_stream() ? gen_streams_ids() : gen_state.nflows)) {
        gen_state.rx_bad++;
        return;
    }
    seq_record(&gen_state.rx_streams[stream], rdle64(pl + PL_OFF_SEQ));
    uint64_t ts = rdle64(pl + PL_OFF_TSC);
    if (gen_by_stream())
        gen_streams_return(stream, rdle64(pl + PL_OFF_SEQ), ts, frame_len, now);
    if (ts <= now)
        hist_add(&gen_state.lat, now - ts);
    else
        gen_state.rx_future_ts++;
}

/* One of our flows' frames: its ports swapped (reflected) or as sent
 * (forwarded back). */
static bool gen_own_ports(uint32_t s, const struct pkt_info *pi)
{
    const struct pkt_flow *fl = &gen_state.flows[s];
    return (pi->dport == fl->sport && pi->sport == fl->dport) ||
           (pi->sport == fl->sport && pi->dport == fl->dport);
}

static void gen_rx_dev(struct net_if *nif, uint64_t now)
{
    struct vnet_rx rx[NET_RX_BATCH];
    int n = net_check(nif, vnet_rx_burst(net_if_dev(nif), rx, NET_RX_BATCH));
    for (int i = 0; i < n; i++) {
        struct pkt_info pi;
        const uint8_t *f = rx[i].frame;
        if (nif == gen_state.nif) {
            gen_state.wire_rx++;
            gen_state.wire_rx_bytes += rx[i].len;
        }
        enum pkt_kind k = pkt_parse(f, rx[i].len, true, &pi);
        /* A file's TCP and ICMP streams come back stamped (rx streams, a reflector). */
        if ((k == PKT_UDP || (k == PKT_STAMPED && gen_state.file)) && pi.payload_len >= PL_MIN) {
            uint32_t s = pi.payload_len >= PL_LEN ? rdle32(f + pi.payload_off + PL_OFF_STREAM)
                                                  : rdle16(f + pi.payload_off + PL_OFF_STREAM);
            /* A file's stream's ports may be the field engine's: its id is
             * enough, and a stamp of ours (its magic) with an id beyond the
             * streams is counted malformed (gen_account_return). The
             * shorthand's and the flows' ports are the config line's. */
            bool ours =
                pi.payload_len >= PL_LEN && rdle32(f + pi.payload_off + PL_OFF_MAGIC) == PL_MAGIC;
            if (gen_state.file ? s < gen_streams_ids() || ours
                               : s < gen_state.nflows && gen_own_ports(s, &pi)) {
                gen_account_return(f + pi.payload_off, pi.payload_len, rx[i].len, now);
                vnet_rx_release(net_if_dev(nif), rx[i].buf);
                continue;
            }
        }
        if (k == PKT_BAD_LEN || k == PKT_BAD_HDR || k == PKT_BAD_CSUM) {
            gen_state.rx_bad++;
            vnet_rx_release(net_if_dev(nif), rx[i].buf);
            continue;
        }
        net_input(nif, &rx[i]);
    }
}

/* Every NIC: the first sends, a second one gets frames a device under
 * test forwarded back (PVP). */
static void gen_rx(uint64_t now)
{
    for (unsigned d = 0; d < net_if_count(); d++)
        gen_rx_dev(net_if_get(d), now);
}

static void stack_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr,
                       u16_t port)
{
    (void)arg;
    (void)pcb;
    (void)addr;
    (void)port;
    uint8_t pl[PL_LEN];
    uint16_t n = pbuf_copy_partial(p, pl, PL_LEN, 0);
    if (n >= PL_MIN)
        gen_account_return(pl, n, (uint32_t)p->tot_len + PKT_HDRS_LEN, time_cycles());
    else
        gen_state.rx_bad++;
    pbuf_free(p);
}

static void gen_setup_sizes(const struct app_config *c)
{
    char why[160];
    uint32_t max_frame = gen_uso_max_frame(c, vnet_mtu(net_if_dev(gen_state.nif)) + ETH_HLEN);
    if (max_frame > PKT_MAX_FRAME)
        max_frame = PKT_MAX_FRAME;
    if (c->imix[0]) {
        struct imix m;
        if (app_config_given(c, "size"))
            vn_fatal(VN_EXIT_CONFIG, "gen: size= and imix= both given; imix= sets the sizes");
        if (imix_parse(c->imix, max_frame, &m, why, sizeof(why)) < 0)
            vn_fatal(VN_EXIT_CONFIG, "gen: %s (device MTU %u)", why,
                     (unsigned)vnet_mtu(net_if_dev(gen_state.nif)));
        gen_state.ncls = m.n;
        imix_sequence(&m, gen_state.imix_seq);
        gen_state.imix_cycle = m.cycle;
        gen_state.mix = m;
    } else {
        if (c->size < PKT_MIN_FRAME || c->size > max_frame)
            vn_fatal(VN_EXIT_CONFIG, "gen: size=%llu: must be %d..%u (%s)",
                     (unsigned long long)c->size, PKT_MIN_FRAME, (unsigned)max_frame,
                     c->uso ? "uso=: the template's largest" : "MTU + 14");
        gen_state.ncls = 1;
        gen_state.mix =
            (struct imix){.n = 1, .size = {(uint16_t)c->size}, .weight = {1}, .cycle = 1};
    }
}

static void gen_setup_flows(const struct app_config *c, bool stack)
{
    char why[256];
    struct flows_spec fs;
    if (flows_parse(c->flows, &fs, why, sizeof(why)) < 0)
        vn_fatal(VN_EXIT_CONFIG, "gen: flows=%s: %s", c->flows, why);
    if (stack && (fs.sip_n || fs.sport_n))
        vn_fatal(VN_EXIT_CONFIG,
                 "gen: path=stack sends from lwIP's own address and port: flows= may vary dip and "
                 "dport only");
    struct pkt_flow base = {net_ip(), lwip_ntohl(c->dst_ip), c->src_port, c->dst_port, 0};
    gen_state.flows = calloc(FLOWS_MAX, sizeof(*gen_state.flows));
    gen_state.seq = calloc(FLOWS_MAX, sizeof(*gen_state.seq));
    gen_state.rx_streams = calloc(FLOWS_MAX, sizeof(*gen_state.rx_streams));
    if (!gen_state.flows || !gen_state.seq || !gen_state.rx_streams)
        vn_fatal(VN_EXIT_OOM, "gen: no memory for %d flows", FLOWS_MAX);
    gen_state.nflows = flows_expand(&fs, &base, gen_state.flows);
    gen_state.random = fs.random;
    gen_state.seed = c->seed;
}

/* Pair k (of those with flows) to CPU k mod the CPUs sending, which are
 * as many as there are CPUs up and pairs to send on; its TX interrupts
 * (txfull=wait's halt) go to that CPU. RX stays CPU 0's. */
static void gen_share_pairs(const struct gen_pair *all, unsigned npairs)
{
    unsigned up = smp_cpus_up();
    gen_state.ncpu = npairs < up ? npairs : up;
    if (!gen_state.ncpu)
        gen_state.ncpu = 1;
    for (unsigned k = 0; k < npairs; k++) {
        unsigned cpu = k % gen_state.ncpu;
        struct gen_cpu *w = &gen_state.cpu[cpu];
        percpu_route("gen", net_if_dev(gen_state.nif), all[k].q, true, cpu);
        w->pairs[w->npairs++] = all[k];
    }
    gen_state.halt = vnet_can_idle(net_if_dev(gen_state.nif));
    for (unsigned k = 0; k < gen_state.ncpu; k++) {
        struct gen_cpu *w = &gen_state.cpu[k];
        w->cur = &w->pairs[0];
        w->slots = w->cur->slots;
        w->lens = calloc((size_t)gen_state.burst, sizeof(*w->lens));
        if (!w->lens)
            vn_fatal(VN_EXIT_OOM, "gen: no memory for a burst of %d", gen_state.burst);
    }
}

/* Each flow's pair, the flows ordered by pair (next_flow walks a pair's
 * share), and with room every pair with flows bound. The raw path hashes
 * as the device's RSS does for the flow's replies (addresses and ports
 * swapped), once per flow here, so per frame it costs nothing; path=stack
 * (room 0) has lwIP send every flow on pair 0, in flow order. The pairs
 * with flows go to the CPUs in turn (gen_share_pairs). */
static void gen_setup_pairs(uint32_t room)
{
    struct vnet_dev *dev = net_if_dev(gen_state.nif);
    struct gen_pair all[VNET_MAX_PAIRS];
    unsigned npairs = 0;
    uint8_t *pair = calloc(gen_state.nflows, 1);
    gen_state.order = calloc(gen_state.nflows, sizeof(*gen_state.order));
    if (!pair || !gen_state.order)
        vn_fatal(VN_EXIT_OOM, "gen: no memory for %u flows", gen_state.nflows);
    for (unsigned fi = 0; room && fi < gen_state.nflows; fi++) {
        const struct pkt_flow *fl = &gen_state.flows[fi];
        pair[fi] = (uint8_t)vnet_flow_pair(dev, fl->daddr, fl->saddr, fl->dport, fl->sport);
    }
    unsigned k = 0;
    for (unsigned q = 0; q < (room ? vnet_pairs(dev) : 1u); q++) {
        struct gen_pair *p = &all[npairs];
        unsigned base = k;
        *p = (struct gen_pair){.q = q};
        for (unsigned fi = 0; fi < gen_state.nflows; fi++)
            if (pair[fi] == q)
                gen_state.order[k++] = (uint16_t)fi;
        if (k == base)
            continue;
        stream_flow_walk_init(&p->walk, gen_state.order + base, k - base, gen_state.random,
                              gen_state.seed + q);
        if (room && net_check(gen_state.nif, vnet_txslots_bind_q(dev, q, room, &p->slots)) < 0)
            vn_fatal(VN_EXIT_DEVICE,
                     "gen: cannot bind TX ring %u: frames in flight did not come back", q);
        if (room && gen_state.uso) {
            uint16_t len;
            uint8_t *master = gen_streams_l4_dev(&len);
            gen_uso_bind(gen_state.nif, q, master, len, gen_state.uso);
        }
        npairs++;
    }
    free(pair);
    gen_share_pairs(all, npairs);
}

/* A stream file instead of the one stream size=, imix=, flows= and
 * rate= describe: refused beside them and on path=stack. */
static bool gen_streams_check(const struct app_config *c)
{
    static const char *const shorthand[] = {"size", "imix", "flows", "rate"};
    if (!gen_streams_load())
        return false;
    for (unsigned k = 0; k < sizeof(shorthand) / sizeof(shorthand[0]); k++)
        if (app_config_given(c, shorthand[k]))
            vn_fatal(VN_EXIT_CONFIG, "gen: %s= beside a stream file: the file sets each stream's",
                     shorthand[k]);
    if (c->path == CFG_PATH_STACK)
        vn_fatal(VN_EXIT_CONFIG, "gen: a stream file is sent on path=raw only");
    return true;
}

/* A file of rx streams only: gen receives them for the run's duration
 * (count= would end a run that sends nothing: refused). */
static bool gen_rx_only(const struct app_config *c)
{
    if (!gen_state.file || gen_state.nstreams)
        return false;
    if (c->count)
        vn_fatal(VN_EXIT_CONFIG, "gen: count= beside a stream file of rx streams only: gen sends "
                                 "nothing, duration= ends the run");
    return true;
}

/* Every stream's template as a class of its own; the addresses a stream
 * does not give are the config line's. */
static void gen_setup_streams(const struct app_config *c, const uint8_t dst_mac[6])
{
    struct stream_addrs d = {
        .sip = net_ip(), .dip = lwip_ntohl(c->dst_ip), .sport = c->src_port, .dport = c->dst_port};
    memcpy(d.smac, net_if_mac(gen_state.nif), 6);
    memcpy(d.dmac, dst_mac, 6);
    gen_state.nstreams = gen_streams_setup(&d);
    gen_state.maxlen = gen_streams_maxlen();
    gen_state.burst = (int)c->burst;
    gen_setup_pairs(gen_state.maxlen > GEN_SLOT_ROOM ? gen_state.maxlen : GEN_SLOT_ROOM);
}

/* The config line's shorthand as one stream through the stream engine
 * (docs/streams.md): its sizes, its rate, the config line's addresses and
 * ports, flows= above one its flow var (each flow its own stream id, its
 * queue pair by RSS, docs/apps.md), uso= its checksum the device's (set
 * once the pairs are bound). path=stack sends through lwIP instead. */
static void gen_shorthand(const struct rate *r)
{
    struct stream_spec s;
    stream_spec_one(&gen_state.mix, r, &s);
    gen_streams_one(&s, gen_state.flows, gen_state.nflows);
}

static inline unsigned gen_cpu_index(const struct gen_cpu *w)
{
    return (unsigned)(w - gen_state.cpu);
}

/* Whether the CPU's next frame is due, and when it is. */
static inline bool gen_due(struct gen_cpu *w, uint64_t now)
{
    return gen_state.nstreams ? gen_streams_next(gen_cpu_index(w)) <= now : pacer_due(&w->pc, now);
}

static inline uint64_t gen_next_due(const struct gen_cpu *w)
{
    return gen_state.nstreams ? gen_streams_next(gen_cpu_index(w)) : pacer_next(&w->pc);
}

/* The pair of the next burst: each of the CPU's in turn. */
static inline void gen_next_pair(struct gen_cpu *w)
{
    if (w->npairs == 1)
        return;
    w->cur = w->cur + 1 == w->pairs + w->npairs ? w->pairs : w->cur + 1;
    w->slots = w->cur->slots;
}

/* TX completions of every pair the CPU sends on; frames still in flight. */
static int gen_reclaim(struct gen_cpu *w)
{
    int busy = 0;
    for (unsigned i = 0; i < w->npairs; i++) {
        net_check(gen_state.nif, vnet_tx_reclaim_q(net_if_dev(gen_state.nif), w->pairs[i].q));
        busy += vnet_tx_in_flight_q(net_if_dev(gen_state.nif), w->pairs[i].q);
    }
    return busy;
}

/* The frames that are due, at most max (and left), into the k reserved
 * slots from first on: the scheduler says whose frames go, the pair's walk
 * which flows (apps/gen_streams.h). Under txfull=drop the due frames
 * beyond k are counted in *dropped (they take their sequence numbers: the
 * receiver sees the loss). A file of bursts only ends the CPU's share
 * once every burst is out. Returns how many were written, with their
 * bytes in *bytes. */
static int gen_build_streams(struct gen_cpu *w, uint16_t first, int k, int max, uint64_t now,
                             uint64_t left, uint64_t *bytes, int *dropped)
{
    unsigned cpu = gen_cpu_index(w);
    int n = gen_streams_burst(cpu, &w->cur->walk, &w->slots, first, k, max, left, gen_state.drop,
                              now, w->lens, bytes, dropped);
    if (gen_streams_done(cpu))
        w->count = w->sent + (uint64_t)(n + *dropped);
    return n;
}

/* Sends up to max frames through lwIP; returns how many went. */
static int gen_stack_burst(struct gen_cpu *w, struct udp_pcb *pcb, int max, uint64_t now,
                           uint64_t left)
{
    int n = 0;
    while (n < max && (uint64_t)n < left && pacer_due(&w->pc, now)) {
        unsigned c = gen_state.ncls == 1 ? 0 : gen_state.imix_seq[w->imix_pos];
        uint16_t len = gen_state.mix.size[c], plen = (uint16_t)(len - PKT_HDRS_LEN);
        struct pbuf *p = pbuf_alloc(PBUF_TRANSPORT, plen, PBUF_RAM);
        if (!p) {
            gen_state.nomem++;
            break;
        }
        next_class(w);
        unsigned fi = stream_flow_walk_next(&w->cur->walk);
        uint8_t *pl = p->payload;
        memset(pl, 0, plen);
        wrle64(pl + PL_OFF_SEQ, gen_state.seq[fi]++);
        wrle64(pl + PL_OFF_TSC, now);
        if (plen >= PL_LEN) {
            wrle32(pl + PL_OFF_STREAM, gen_state.flows[fi].stream);
            wrle32(pl + PL_OFF_MAGIC, PL_MAGIC);
        } else {
            wrle16(pl + PL_OFF_STREAM, (uint16_t)gen_state.flows[fi].stream);
        }
        ip_addr_t dst;
        ip_addr_set_ip4_u32_val(dst, lwip_htonl(gen_state.flows[fi].daddr));
        err_t e = udp_sendto(pcb, p, &dst, gen_state.flows[fi].dport);
        pbuf_free(p);
        pacer_sent(&w->pc, len);
        if (e != ERR_OK) {
            w->dropped++;
            w->cur->dropped++;
        } else {
            w->packets++;
            w->bytes += len;
            w->cur->packets++;
            w->cur->bytes += len;
            w->cls_packets[c]++;
        }
        n++;
    }
    return n;
}

static uint64_t gen_wake(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t m = a < b ? a : b;
    return m < c ? m : c;
}

/* One burst on the CPU's next pair (raw path): reserve, build, send.
 * Returns the frames it took (sent and dropped). */
static int gen_send_round(struct gen_cpu *w, uint64_t now)
{
    if (!gen_due(w, now))
        return 0;
    uint16_t first = 0;
    gen_next_pair(w);
    struct gen_pair *p = w->cur;
    int k = net_check(gen_state.nif, vnet_txslots_reserve_q(net_if_dev(gen_state.nif), p->q,
                                                            gen_state.burst, &first));
    if (k < 0)
        vn_fatal(VN_EXIT_INTERNAL, "gen: TX slots: error %d", k);
    uint64_t t0 = time_cycles(), bytes, left = w->count - w->sent;
    int dropped = 0;
    int q = gen_build_streams(w, first, k, gen_state.burst, now, left, &bytes, &dropped);
    int n = q + dropped;
    if (!n)
        return 0;
    w->build_cycles += time_cycles() - t0;
    int rc = net_check(gen_state.nif,
                       vnet_txslots_send_q(net_if_dev(gen_state.nif), p->q, q, w->lens, dropped));
    if (rc < 0)
        vn_fatal(VN_EXIT_INTERNAL, "gen: TX slots: error %d", rc);
    p->packets += (uint64_t)q;
    p->bytes += bytes;
    p->dropped += (uint64_t)dropped;
    VN_WRITE_ONCE(w->bytes, w->bytes + bytes);
    VN_WRITE_ONCE(w->packets, w->packets + (uint64_t)q);
    VN_WRITE_ONCE(w->dropped, w->dropped + (uint64_t)dropped);
    w->sent += (uint64_t)n;
    return n;
}

/* An AP's whole run: its pairs until its share is sent or the deadline;
 * CPU 0 does the receiving, lwIP and the samples. Paced and early with
 * notify=irq|hybrid, it halts on its own timer until the next departure
 * (a TX interrupt of its pairs ends it too). */
static int gen_ap(unsigned cpu, void *arg)
{
    struct gen_cpu *w = &gen_state.cpu[cpu];
    (void)arg;
    while (w->sent < w->count) {
        uint64_t now = time_cycles();
        if (now >= gen_state.end)
            break;
        if (gen_send_round(w, now) != 0)
            continue;
        gen_reclaim(w);
        if (gen_state.halt && !gen_due(w, now)) {
            irq_idle_enter();
            irq_idle(gen_wake(gen_next_due(w), gen_state.end, gen_state.end));
        }
    }
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
    smp_wake(0); /* CPU 0 may be halted, waiting for this */
    return 0;
}

/* Sent so far by every CPU (for a sample: each CPU's own counts, read). */
static void gen_sent_now(uint64_t *packets, uint64_t *bytes, uint64_t *dropped)
{
    *packets = *bytes = *dropped = 0;
    for (unsigned k = 0; k < gen_state.ncpu; k++) {
        *packets += VN_READ_ONCE(gen_state.cpu[k].packets);
        *bytes += VN_READ_ONCE(gen_state.cpu[k].bytes);
        *dropped += VN_READ_ONCE(gen_state.cpu[k].dropped);
    }
}

static bool gen_aps_done(void)
{
    for (unsigned k = 1; k < gen_state.ncpu; k++)
        if (!__atomic_load_n(&gen_state.cpu[k].done, __ATOMIC_ACQUIRE))
            return false;
    return true;
}

/* Every CPU's share of rate= (the first rate % N CPUs a packet or bit a
 * second more) and of count= (CPU 0 the count's remainder: both add up
 * exactly): its copy of the shorthand's stream at its share, or
 * path=stack's pacer (a stream file's streams keep their rates: one CPU
 * sends them). Then the APs' start. */
static void gen_start_cpus(const struct app_config *c, uint64_t count, const struct rate *r,
                           uint64_t start)
{
    for (unsigned k = 0; k < gen_state.ncpu; k++) {
        struct gen_cpu *w = &gen_state.cpu[k];
        struct rate share;
        w->count =
            count == UINT64_MAX ? count : count / gen_state.ncpu + (k ? 0 : count % gen_state.ncpu);
        if (rate_share(r, gen_state.ncpu, k, &share) < 0)
            vn_fatal(VN_EXIT_CONFIG, "gen: rate=%s is less than one a second for each of %u CPUs",
                     c->rate, gen_state.ncpu);
        if (!gen_state.nstreams) {
            if (pacer_init(&w->pc, &share, time_tsc_hz, start) < 0)
                vn_fatal(VN_EXIT_CONFIG, "gen: rate=%s cannot be paced with a %llu Hz TSC", c->rate,
                         (unsigned long long)time_tsc_hz);
            continue;
        }
        if (!gen_state.file)
            gen_streams_share(k, &share);
        if (gen_streams_start(k, time_tsc_hz, c->seed, start) < 0)
            vn_fatal(VN_EXIT_CONFIG, "gen: a stream's rate cannot be paced with a %llu Hz TSC",
                     (unsigned long long)time_tsc_hz);
    }
    for (unsigned k = 1; k < gen_state.ncpu; k++)
        if (smp_run(k, gen_ap, NULL) < 0)
            vn_fatal(VN_EXIT_INTERNAL, "gen: CPU %u is not idle", k);
}

/* Every CPU's counts into the totals, once all are done. */
static void gen_add_up(void)
{
    for (unsigned k = 0; k < gen_state.ncpu; k++) {
        const struct gen_cpu *w = &gen_state.cpu[k];
        gen_state.packets += w->packets;
        gen_state.bytes += w->bytes;
        gen_state.dropped += w->dropped;
        gen_state.build_cycles += w->build_cycles;
        for (unsigned ci = 0; ci < gen_state.ncls; ci++)
            gen_state.cls_packets[ci] += w->cls_packets[ci];
    }
    /* The shorthand through the stream engine: its one stream's. */
    for (unsigned ci = 0; gen_state.nstreams && ci < gen_state.ncls; ci++)
        gen_state.cls_packets[ci] = gen_streams_size_packets(0, ci);
}

/* "queues": every pair sent on, the CPU that sent, its counts. */
static void gen_queues_json(struct json *j)
{
    json_arr_begin(j, "queues");
    for (unsigned k = 0; k < gen_state.ncpu; k++)
        for (unsigned i = 0; i < gen_state.cpu[k].npairs; i++) {
            const struct gen_pair *p = &gen_state.cpu[k].pairs[i];
            json_obj_begin(j, NULL);
            json_u64(j, "queue", p->q);
            json_u64(j, "cpu", k);
            json_u64(j, "flows", p->walk.n);
            json_u64(j, "packets", p->packets);
            json_u64(j, "bytes", p->bytes);
            json_u64(j, "dropped", p->dropped);
            apps_tx_ring_json(j, net_if_dev(gen_state.nif), p->q);
            json_obj_end(j);
        }
    json_arr_end(j);
}

/* "sizes": the frames sent of each size (class). */
static void gen_sizes_json(struct json *j)
{
    json_arr_begin(j, "sizes");
    for (unsigned ci = 0; ci < gen_state.ncls; ci++) {
        json_obj_begin(j, NULL);
        json_u64(j, "size", gen_state.mix.size[ci]);
        json_u64(j, "packets", gen_state.cls_packets[ci]);
        json_obj_end(j);
    }
    json_arr_end(j);
}

/* rate=: its target and what was achieved, in its unit. */
static void gen_rate_json(struct json *j, const struct rate *r, uint64_t ns)
{
    if (r->unit == RATE_UNLIMITED)
        return;
    bool pps = r->unit == RATE_PPS;
    double achieved = pps ? app_per_s(gen_state.packets + gen_state.dropped, ns)
                          : app_per_s(gen_state.bytes * 8, ns);
    json_str(j, "rate_unit", pps ? "pps" : "bps");
    json_u64(j, "rate_target", r->per_s);
    json_double(j, "rate_achieved", achieved);
    json_double(j, "rate_error", (achieved - (double)r->per_s) / (double)r->per_s);
}

/* "rx": the reflected frames, their sequence checks and latency. */
static void gen_rx_json(struct json *j)
{
    if (!gen_state.rx_packets && !gen_state.rx_bad)
        return;
    struct seq_totals t;
    seq_sum(gen_state.rx_streams, gen_state.nflows, &t);
    json_obj_begin(j, "rx");
    json_u64(j, "packets", gen_state.rx_packets);
    json_u64(j, "bytes", gen_state.rx_bytes);
    qstats_seq_json(j, &t);
    json_u64(j, "malformed", gen_state.rx_bad);
    json_u64(j, "future_ts", gen_state.rx_future_ts);
    json_double(j, "p50_us", (double)app_cycles_ns(hist_quantile(&gen_state.lat, 0.5)) / 1e3);
    json_double(j, "p90_us", (double)app_cycles_ns(hist_quantile(&gen_state.lat, 0.9)) / 1e3);
    json_double(j, "p99_us", (double)app_cycles_ns(hist_quantile(&gen_state.lat, 0.99)) / 1e3);
    json_double(j, "p999_us", (double)app_cycles_ns(hist_quantile(&gen_state.lat, 0.999)) / 1e3);
    json_double(j, "max_us",
                (double)app_cycles_ns(gen_state.lat.count ? gen_state.lat.max : 0) / 1e3);
    json_obj_end(j);
}

static void gen_result(const struct app_config *c, uint64_t ns, const struct rate *r, bool stack,
                       const struct stall *st)
{
    app_summary("gen", gen_state.packets, gen_state.bytes, ns);
    /* Reflected frames' latency, in TSC cycles. */
    app_hist_lines("latency", &gen_state.lat, 1e9 / (double)time_tsc_hz);
    struct json *j = app_result_begin(c, gen_state.packets, gen_state.bytes, ns);
    /* The stack path's frames are lwIP's: counted there. */
    app_wire_json(j, stack ? 0 : gen_state.packets, stack ? 0 : gen_state.bytes, gen_state.wire_rx,
                  gen_state.wire_rx_bytes);
    json_str(j, "path", stack ? "stack" : "raw");
    json_u64(j, "tx_dropped", gen_state.dropped);
    json_u64(j, "tx_nomem", gen_state.nomem);
    json_u64(j, "flows", gen_state.nflows);
    json_u64(j, "burst", c->burst);
    if (!stack && gen_state.packets + gen_state.dropped) {
        /* What the generator itself costs per frame, and the rate that
         * allows: compare with pps to see who the bottleneck is. */
        double cpp =
            (double)gen_state.build_cycles / (double)(gen_state.packets + gen_state.dropped);
        json_double(j, "build_cycles_per_packet", cpp);
        json_double(j, "build_pps_capacity", cpp > 0 ? (double)time_tsc_hz / cpp : 0);
    }
    gen_queues_json(j);
    if (gen_by_stream())
        gen_streams_json(j, ns);
    gen_sizes_json(j);
    gen_uso_json(j, gen_state.uso, gen_state.mix.size[0], gen_state.packets);
    gen_rate_json(j, r, ns);
    gen_rx_json(j);
    stall_json(j, st, time_tsc_hz);
    app_result_end(j);
}

/* CPU 0's run, from the setup to the result: what the phases of
 * app_gen_main hand on. */
struct gen_run {
    struct rate r;
    bool stack;          /* path=stack */
    struct udp_pcb *pcb; /* path=stack's */
    uint64_t count;      /* count= (UINT64_MAX: none; 0: rx streams only) */
    struct meter m;
    struct stall st;
    uint64_t start, end; /* cycles */
    uint64_t now;        /* the last round's */
};

/* The config checked, the network up, the sizes and flows set, then the
 * path's own: lwIP's PCB (path=stack) or the streams and their pairs. */
static void gen_setup(const struct app_config *c, struct gen_run *run)
{
    char why[160];
    if (rate_parse(c->rate, &run->r, why, sizeof(why)) < 0)
        vn_fatal(VN_EXIT_CONFIG, "gen: rate=%s: %s", c->rate, why);
    bool file = gen_streams_check(c);
    gen_state.file = file;

    apps_net_init(c, 1, gen_uso_offloads(c));
    gen_state.drop = c->txfull == CFG_TXFULL_DROP;
    gen_state.uso = c->uso;
    gen_state.nif = net_if_get(0);
    hist_init(&gen_state.lat);
    if (!file)
        gen_setup_sizes(c);
    gen_setup_flows(c, run->stack);
    gen_uso_check(c, gen_state.nif, gen_state.ncls, gen_state.nflows);
    if (!file && !run->stack)
        gen_shorthand(&run->r);

    uint8_t dst_mac[6];
    apps_dst_mac(c, dst_mac); /* also for path=stack: a clear error instead of silent ARP drops */
    if (!run->stack) {
        gen_setup_streams(c, dst_mac);
        gen_state.rx_only = gen_rx_only(c);
        return;
    }
    run->pcb = udp_new();
    if (!run->pcb || udp_bind(run->pcb, IP_ADDR_ANY, c->src_port) != ERR_OK)
        vn_fatal(VN_EXIT_INTERNAL, "gen: cannot bind UDP port %u", (unsigned)c->src_port);
    udp_recv(run->pcb, stack_recv, NULL);
    gen_setup_pairs(0);
}

/* The console line that says what is sent. */
static void gen_banner(const struct app_config *c, bool stack)
{
    int burst = (int)c->burst;
    if (gen_state.rx_only)
        printf("gen: raw path, receiving the stream file's %u rx streams only\n",
               gen_streams_ids());
    else if (gen_state.file)
        printf("gen: raw path, %u streams of the stream file, burst %d\n", gen_state.nstreams,
               burst);
    else
        printf("gen: %s path, %u size%s, %u flow%s, burst %d, rate %s, %u CPU%s sending\n",
               stack ? "stack" : "raw", gen_state.ncls, gen_state.ncls > 1 ? "s" : "",
               gen_state.nflows, gen_state.nflows > 1 ? "s" : "", burst,
               c->rate[0] ? c->rate : "max", gen_state.ncpu, gen_state.ncpu > 1 ? "s" : "");
}

/* The clock starts: the meter and the deadline, the banner, then every
 * CPU's share and the APs. */
static void gen_start(const struct app_config *c, struct gen_run *run)
{
    run->count = gen_state.rx_only ? 0 : c->count ? c->count : UINT64_MAX;
    meter_start(&run->m, c);
    run->start = run->m.t0;
    run->end = app_deadline(c, run->start, c->count ? GEN_COUNT_LIMIT_S : GEN_DEFAULT_S);
    gen_banner(c, run->stack);
    gen_state.end = run->end;
    gen_start_cpus(c, run->count, &run->r, run->start);
}

/* qreset_at=: the pair's reset, once. */
static void gen_qreset(const struct app_config *c, unsigned q, bool flush)
{
    if (flush)
        net_flush(gen_state.nif);
    apps_qreset(c, gen_state.nif, q, true);
    gen_state.qreset_done = true;
}

/* A "sample" line: every CPU's counts so far and the frames returned. */
static void gen_sample(struct gen_run *run, uint64_t now)
{
    uint64_t sp, sb, sd;
    gen_sent_now(&sp, &sb, &sd);
    struct json *j = meter_sample(&run->m, now, sp, sb);
    json_u64(j, "tx_dropped", sd);
    json_u64(j, "returned", gen_state.rx_packets);
    meter_end(&run->m, &run->st);
}

/* CPU 0's sending, receiving and samples until every share is out or the
 * deadline: the hot path, each round's work here, its state in locals. */
static void gen_send_loop(const struct app_config *c, struct gen_run *run)
{
    const bool stack = run->stack;
    const int burst = (int)c->burst;
    const uint64_t end = run->end, service_every = time_ns_to_cycles(SERVICE_US * 1000u);
    uint64_t now = run->start, next_service = run->start;
    unsigned rounds = 0;
    struct gen_cpu *w = &gen_state.cpu[0];
    /* Stalls from here: the console line before was the app's own time. */
    app_stall_start(&run->st);
    while (w->sent < w->count || !gen_aps_done() || gen_state.rx_only) {
        now = time_cycles();
        stall_round(&run->st, now);
        if (now >= end)
            break;
        int n = 0;
        if (w->sent >= w->count) {
            /* CPU 0's share is out: it receives and serves while the APs send. */
        } else if (stack) {
            n = gen_stack_burst(w, run->pcb, burst, now, w->count - w->sent);
            w->sent += (uint64_t)n;
            if (c->qreset_at && !gen_state.qreset_done && w->sent >= c->qreset_at)
                gen_qreset(c, 0, true);
        } else {
            n = gen_send_round(w, now);
            if (n && c->qreset_at && !gen_state.qreset_done && w->sent >= c->qreset_at)
                gen_qreset(c, w->cur->q, false);
            /* vnet_txslots_reserve reclaims when the ring runs short; here
             * only while idle (paced), so slots come back between bursts. */
            if (n == 0)
                gen_reclaim(w);
        }
        /* RX (reflected frames, ARP, ping) every few rounds: polling the
         * used ring costs as much as building a burst under TCG. */
        if (n == 0 || (++rounds & 7) == 0)
            gen_rx(now);
        if (n == 0 || now >= next_service) {
            net_service();
            next_service = now + service_every;
        }
        /* Paced and early, or CPU 0's share out while the APs send: halt
         * (notify=irq|hybrid) until the next departure, a frame, an AP's
         * wake when it is done, the next sample or the end. */
        bool own_left = w->sent < w->count;
        if (n == 0 && (!own_left || !gen_due(w, now)))
            stall_skip(&run->st,
                       net_idle(gen_wake(own_left ? gen_next_due(w) : end, run->m.next, end)));
        if (meter_due(&run->m, now))
            gen_sample(run, now);
    }
    run->now = now;
}

/* Let the ring drain so every frame is accounted and reflected ones
 * have a chance to come back. */
static void gen_drain(bool stack)
{
    uint64_t drain_end = time_cycles() + time_ns_to_cycles(GEN_DRAIN_MS * 1000000ull);
    uint64_t quiet = time_cycles(), last_rx = gen_state.rx_packets;
    while (time_cycles() < drain_end) {
        gen_rx(time_cycles());
        net_service();
        if (gen_state.rx_packets != last_rx) {
            last_rx = gen_state.rx_packets;
            quiet = time_cycles();
        }
        bool idle = true;
        for (unsigned k = 0; !stack && k < gen_state.ncpu; k++)
            idle = gen_reclaim(&gen_state.cpu[k]) == 0 && idle;
        if (idle && time_cycles() - quiet > time_ns_to_cycles(100000000ull))
            break;
    }
}

int app_gen_main(const struct app_config *c)
{
    struct gen_run run = {.stack = c->path == CFG_PATH_STACK};
    gen_setup(c, &run);
    gen_start(c, &run);
    gen_send_loop(c, &run);
    for (unsigned k = 1; k < gen_state.ncpu; k++)
        smp_wait(k);
    gen_add_up();
    uint64_t sent = gen_state.packets + gen_state.dropped;
    uint64_t ns = time_cycles_to_ns(run.now - run.start);
    gen_drain(run.stack);
    if (run.stack)
        udp_remove(run.pcb);
    gen_result(c, ns, &run.r, run.stack, &run.st);
    bool limit_is_timeout = c->count && !c->duration_s;
    if (limit_is_timeout && sent < run.count) {
        printf("gen: sent %llu of count=%llu within %d s\n", (unsigned long long)sent,
               (unsigned long long)run.count, GEN_COUNT_LIMIT_S);
        return VN_EXIT_TIMEOUT;
    }
    return VN_EXIT_OK;
}
