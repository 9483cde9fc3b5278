/* Option parsing and checking: every bad value is one line naming the
 * option, the value and what is allowed. */
#include "tools/peer/peer_opts.h"
#include "tools/peer/peer_streams.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define M_COUNT   (1u << PEER_MODE_COUNT)
#define M_SEND    (1u << PEER_MODE_SEND)
#define M_REFLECT (1u << PEER_MODE_REFLECT)
#define M_ALL     (M_COUNT | M_SEND | M_REFLECT)
#define M_RX      (M_COUNT | M_REFLECT)

#define SECONDS_MAX (365.0 * 86400.0)
#define NS_PER_S    1000000000.0

enum opt_id {
    O_HELP = 'h',
    O_LOCAL = 256,
    O_REMOTE,
    O_COUNT,
    O_DURATION,
    O_IDLE,
    O_SIZE,
    O_SRC_MAC,
    O_DST_MAC,
    O_SRC_IP,
    O_DST_IP,
    O_SRC_PORT,
    O_DST_PORT,
    O_STREAM,
    O_STREAMS,
    O_RATE,
    O_BATCH,
    O_MALFORMED,
    O_READY_FILE,
    O_PROGRESS,
    O_VERIFY_CSUM,
    O_SOCKBUF,
    O_LATENCY,
    O_PAYLOAD_ONLY,
    O_TX_VHOST,
    O_RX_VHOST,
    O_LINK_WAIT,
    O_START_ON_USR1,
    O_WARMUP,
    O_MAX_LAG,
    O_RX_IF,
    O_STREAM_FILE,
    O_HOLD,
};

static const struct option long_opts[] = {
    {"help", no_argument, NULL, O_HELP},
    {"local", required_argument, NULL, O_LOCAL},
    {"remote", required_argument, NULL, O_REMOTE},
    {"count", required_argument, NULL, O_COUNT},
    {"duration", required_argument, NULL, O_DURATION},
    {"idle", required_argument, NULL, O_IDLE},
    {"size", required_argument, NULL, O_SIZE},
    {"src-mac", required_argument, NULL, O_SRC_MAC},
    {"dst-mac", required_argument, NULL, O_DST_MAC},
    {"src-ip", required_argument, NULL, O_SRC_IP},
    {"dst-ip", required_argument, NULL, O_DST_IP},
    {"src-port", required_argument, NULL, O_SRC_PORT},
    {"dst-port", required_argument, NULL, O_DST_PORT},
    {"stream", required_argument, NULL, O_STREAM},
    {"streams", required_argument, NULL, O_STREAMS},
    {"rate", required_argument, NULL, O_RATE},
    {"batch", required_argument, NULL, O_BATCH},
    {"malformed", required_argument, NULL, O_MALFORMED},
    {"ready-file", required_argument, NULL, O_READY_FILE},
    {"progress", no_argument, NULL, O_PROGRESS},
    {"verify-csum", no_argument, NULL, O_VERIFY_CSUM},
    {"sockbuf", required_argument, NULL, O_SOCKBUF},
    {"latency", no_argument, NULL, O_LATENCY},
    {"payload-only", no_argument, NULL, O_PAYLOAD_ONLY},
    {"tx-vhost", required_argument, NULL, O_TX_VHOST},
    {"rx-vhost", required_argument, NULL, O_RX_VHOST},
    {"link-wait", required_argument, NULL, O_LINK_WAIT},
    {"start-on-usr1", no_argument, NULL, O_START_ON_USR1},
    {"warmup", required_argument, NULL, O_WARMUP},
    {"max-lag", required_argument, NULL, O_MAX_LAG},
    {"rx-if", required_argument, NULL, O_RX_IF},
    {"stream-file", required_argument, NULL, O_STREAM_FILE},
    {"hold", required_argument, NULL, O_HOLD},
    {NULL, 0, NULL, 0},
};

/* Which modes take each option (index: enum opt_id - O_LOCAL). */
static const unsigned opt_modes[] = {
    [O_LOCAL - O_LOCAL] = M_ALL,
    [O_REMOTE - O_LOCAL] = M_ALL,
    [O_COUNT - O_LOCAL] = M_ALL,
    [O_DURATION - O_LOCAL] = M_ALL,
    [O_IDLE - O_LOCAL] = M_ALL,
    [O_SIZE - O_LOCAL] = M_SEND,
    [O_SRC_MAC - O_LOCAL] = M_SEND,
    [O_DST_MAC - O_LOCAL] = M_SEND,
    [O_SRC_IP - O_LOCAL] = M_SEND,
    [O_DST_IP - O_LOCAL] = M_SEND,
    [O_SRC_PORT - O_LOCAL] = M_SEND,
    [O_DST_PORT - O_LOCAL] = M_SEND,
    [O_STREAM - O_LOCAL] = M_SEND,
    [O_STREAMS - O_LOCAL] = M_SEND,
    [O_RATE - O_LOCAL] = M_SEND,
    [O_BATCH - O_LOCAL] = M_ALL,
    [O_MALFORMED - O_LOCAL] = M_SEND,
    [O_READY_FILE - O_LOCAL] = M_ALL,
    [O_PROGRESS - O_LOCAL] = M_ALL,
    [O_VERIFY_CSUM - O_LOCAL] = M_ALL,
    [O_SOCKBUF - O_LOCAL] = M_ALL,
    [O_LATENCY - O_LOCAL] = M_COUNT | M_SEND,
    [O_PAYLOAD_ONLY - O_LOCAL] = M_SEND,
    [O_TX_VHOST - O_LOCAL] = M_SEND,
    [O_RX_VHOST - O_LOCAL] = M_SEND | M_COUNT,
    [O_LINK_WAIT - O_LOCAL] = M_SEND | M_COUNT,
    [O_START_ON_USR1 - O_LOCAL] = M_SEND,
    [O_WARMUP - O_LOCAL] = M_SEND,
    [O_MAX_LAG - O_LOCAL] = M_SEND,
    [O_RX_IF - O_LOCAL] = M_ALL,
    [O_STREAM_FILE - O_LOCAL] = M_SEND,
    [O_HOLD - O_LOCAL] = M_SEND,
};

static const char *const mode_names[] = {
    [PEER_MODE_COUNT] = "count",
    [PEER_MODE_SEND] = "send",
    [PEER_MODE_REFLECT] = "reflect",
};

const char *peer_mode_name(enum peer_mode m)
{
    return mode_names[m];
}

void peer_args_usage(FILE *f)
{
    fputs("usage: vnperf-peer MODE [options]\n"
          "Host-side peer for QEMU -netdev dgram / -netdev socket,udp=: one UDP datagram\n"
          "is one Ethernet frame. Prints one JSON result line on stdout at the end\n"
          "(also on SIGINT/SIGTERM). Numbers take k/m/g suffixes (x1000).\n"
          "\n"
          "modes:\n"
          "  count    receive and count frames, vnperf streams (loss, dup, reorder), sizes\n"
          "  send     send vnperf UDP/IPv4 frames (or malformed ones)\n"
          "  reflect  send every received frame back, MACs/IPs/ports swapped\n"
          "\n"
          "all modes:\n"
          "  --local IP:PORT      address to bind: QEMU's remote (port 0: any; send\n"
          "                       default 127.0.0.1:0, required otherwise)\n"
          "  --remote IP:PORT     QEMU's local address; required for send and reflect;\n"
          "                       count takes frames from this address only\n"
          "  --count N            stop after N frames\n"
          "  --duration S         stop after S seconds (decimal)\n"
          "  --batch N            frames per recvmmsg/sendmmsg, 1..256 (default 64)\n"
          "  --sockbuf BYTES      SO_RCVBUF/SO_SNDBUF to ask for (default 32 MiB)\n"
          "  --ready-file PATH    write {\"pid\":..,\"local\":\"IP:PORT\"} once bound\n"
          "  --progress           one progress line per second on stderr\n"
          "count, reflect:\n"
          "  --idle S             stop after S seconds without frames, once one came\n"
          "  --verify-csum        also check UDP checksums (IPv4 ones always are)\n"
          "  --rx-if IF           every frame interface IF receives (AF_PACKET, root),\n"
          "                       whatever its addresses and ports, instead of --local's\n"
          "                       socket: a tap's host end (reflect: each vnperf frame\n"
          "                       back onto IF, the rest and GSO frames longer than its\n"
          "                       MTU's left to the host's stack; send\n"
          "                       --stream-file too: its frames written whole\n"
          "                       onto IF, what IF receives counted)\n"
          "count:\n"
          "  --latency            one-way latency of frames stamped by a vnperf-peer send\n"
          "                       on this host (its TSC), e.g. forwarded back by a VM\n"
          "send:\n"
          "  --size BYTES         Ethernet frame length without FCS, 60..9014 (default 60)\n"
          "  --src-mac MAC        default 02:00:00:00:00:01\n"
          "  --dst-mac MAC        default 52:54:00:12:34:56 (QEMU's default NIC MAC)\n"
          "  --src-ip IP          default 10.0.2.2\n"
          "  --dst-ip IP          default 10.0.2.15\n"
          "  --src-port PORT      default 9000\n"
          "  --dst-port PORT      default 9000\n"
          "  --stream ID          first stream id (default 0)\n"
          "  --streams N          spread frames round-robin over N streams, each with its\n"
          "                       own sequence numbers (default 1)\n"
          "  --rate PPS           pace to PPS frames per second (default: flat out)\n"
          "  --max-lag S          with --rate: when the sender fell more than S seconds\n"
          "                       behind (it did not get a CPU), the frames due beyond\n"
          "                       that are skipped (\"skipped\"), not sent in one burst\n"
          "  --malformed MODE     truncated, bad-ip-len, bad-udp-len, bad-csum, garbage,\n"
          "                       runt\n"
          "  --payload-only       send each frame's UDP payload only (from a kernel UDP\n"
          "                       socket, whose headers make the frame --size bytes)\n"
          "  --stream-file FILE   send the rx streams of a stream file as the guest reads\n"
          "                       it (\"vnperf-streams 2\"), each at its own rate, and count\n"
          "                       what arrives on --local (or --rx-if) too (a second\n"
          "                       result line, mode count); not with --size, --rate,\n"
          "                       --stream(s), --max-lag, --malformed, --payload-only\n"
          "  --hold S             after the last frame keep the socket open S seconds or\n"
          "                       until stopped (SIGTERM), so what the guest sends back\n"
          "                       to it is not answered with ICMP port unreachables\n"
          "vnperf-peer-dpdk (DPDK net_vhost ports instead of the UDP socket):\n"
          "  --tx-vhost SOCK      send: vhost-user socket whose guest receives the frames\n"
          "  --rx-vhost SOCK      count, or send too (PVP): socket whose guest's frames\n"
          "                       are counted\n"
          "  --link-wait S        how long to wait for the guests' drivers (default 60)\n"
          "  --start-on-usr1      send: start the clock at SIGUSR1, not at link up (also\n"
          "                       vnperf-peer's send --stream-file: not at once)\n"
          "  --warmup S           send with --rx-vhost: S seconds of the same frames at the\n"
          "                       same rate first, counted apart (\"warmup\" in the result),\n"
          "                       then the clock starts once they are back\n"
          "  send with --rx-vhost also takes --idle, --verify-csum and --latency for the\n"
          "  frames it counts there (a second result line, mode count)\n"
          "\n"
          "exit status: 0 done (also after a signal), 1 runtime error, 2 bad options\n",
          f);
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

/* Decimal with an optional k/m/g (x1000) suffix, within [min, max]. */
static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    uint64_t mult = 1, v;
    char *end;

    if (*s < '0' || *s > '9')
        return -EINVAL;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno)
        return -EINVAL;
    if (*end != '\0') {
        const char *sfx = "kmg";
        const char *p = strchr(sfx, *end | 0x20);

        if (!p || end[1] != '\0')
            return -EINVAL;
        for (const char *q = sfx; q <= p; q++)
            mult *= 1000;
        if (v > UINT64_MAX / mult)
            return -EINVAL;
    }
    v *= mult;
    if (v < min || v > max)
        return -EINVAL;
    *out = v;
    return 0;
}

static int parse_seconds(const char *s, uint64_t *ns)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !isfinite(v) || v <= 0 || v > SECONDS_MAX)
        return -EINVAL;
    *ns = (uint64_t)(v * NS_PER_S + 0.5);
    return *ns ? 0 : -EINVAL;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Exactly xx:xx:xx:xx:xx:xx. */
static int parse_mac(const char *s, uint8_t mac[6])
{
    uint8_t m[6];

    if (strlen(s) != 17)
        return -EINVAL;
    for (int i = 0; i < 6; i++) {
        int hi = hex_digit(s[3 * i]), lo = hex_digit(s[3 * i + 1]);

        if (hi < 0 || lo < 0 || (i < 5 && s[3 * i + 2] != ':'))
            return -EINVAL;
        m[i] = (uint8_t)(hi << 4 | lo);
    }
    memcpy(mac, m, 6);
    return 0;
}

/* Dotted quad into host byte order, as struct pkt_flow keeps it. */
static int parse_ip(const char *s, uint32_t *ip)
{
    struct in_addr a;

    if (inet_pton(AF_INET, s, &a) != 1)
        return -EINVAL;
    *ip = ntohl(a.s_addr);
    return 0;
}

/* IPv4:PORT; port 0 only where min_port is 0. */
static int parse_addr(const char *s, uint64_t min_port, struct sockaddr_in *sa)
{
    const char *colon = strrchr(s, ':');
    char host[INET_ADDRSTRLEN];
    uint64_t port;

    if (!colon || (size_t)(colon - s) >= sizeof(host))
        return -EINVAL;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    if (inet_pton(AF_INET, host, &sa->sin_addr) != 1 ||
        parse_u64(colon + 1, min_port, 65535, &port) != 0 || strpbrk(colon + 1, "kKmMgG"))
        return -EINVAL;
    sa->sin_port = htons((uint16_t)port);
    return 0;
}

static void set_defaults(struct peer_opts *o)
{
    static const uint8_t src_mac[ETH_ALEN] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
    static const uint8_t dst_mac[ETH_ALEN] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};

    memset(o, 0, sizeof(*o));
    o->local.sin_family = AF_INET;
    o->local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    o->size = PKT_MIN_FRAME;
    memcpy(o->src_mac, src_mac, ETH_ALEN);
    memcpy(o->dst_mac, dst_mac, ETH_ALEN);
    o->flow.saddr = 0x0a000202; /* 10.0.2.2 */
    o->flow.daddr = 0x0a00020f; /* 10.0.2.15 */
    o->flow.sport = 9000;
    o->flow.dport = 9000;
    o->streams = 1;
    o->batch = PEER_BATCH_DEFAULT;
    o->sockbuf = PEER_SOCKBUF_DEFAULT;
    o->link_wait_ns = PEER_LINK_WAIT_DEFAULT;
}

/* One option's value into o; -EINVAL with the reason in err. */
static int apply(struct peer_opts *o, int id, const char *name, const char *v, char *err,
                 size_t errlen)
{
    uint64_t u;
    int m;

    switch (id) {
    case O_LOCAL:
        if (parse_addr(v, 0, &o->local))
            return fail(err, errlen, "--%s '%s': expected IPv4:PORT", name, v);
        return 0;
    case O_REMOTE:
        if (parse_addr(v, 1, &o->remote))
            return fail(err, errlen, "--%s '%s': expected IPv4:PORT, port 1..65535", name, v);
        o->have_remote = true;
        return 0;
    case O_COUNT:
        if (parse_u64(v, 1, UINT64_MAX, &o->count))
            return fail(err, errlen, "--%s '%s': expected a frame count >= 1", name, v);
        return 0;
    case O_DURATION:
    case O_IDLE:
    case O_HOLD:
        if (parse_seconds(v, id == O_IDLE   ? &o->idle_ns
                             : id == O_HOLD ? &o->hold_ns
                                            : &o->duration_ns))
            return fail(err, errlen, "--%s '%s': expected seconds > 0 (e.g. 2.5)", name, v);
        return 0;
    case O_SIZE:
        if (parse_u64(v, PKT_MIN_FRAME, PKT_MAX_FRAME, &u))
            return fail(err, errlen, "--%s '%s': expected %d..%d bytes", name, v, PKT_MIN_FRAME,
                        PKT_MAX_FRAME);
        o->size = (uint32_t)u;
        return 0;
    case O_SRC_MAC:
    case O_DST_MAC:
        if (parse_mac(v, id == O_SRC_MAC ? o->src_mac : o->dst_mac))
            return fail(err, errlen, "--%s '%s': expected xx:xx:xx:xx:xx:xx", name, v);
        return 0;
    case O_SRC_IP:
    case O_DST_IP:
        if (parse_ip(v, id == O_SRC_IP ? &o->flow.saddr : &o->flow.daddr))
            return fail(err, errlen, "--%s '%s': expected a dotted IPv4 address", name, v);
        return 0;
    case O_SRC_PORT:
    case O_DST_PORT:
        if (parse_u64(v, 1, 65535, &u))
            return fail(err, errlen, "--%s '%s': expected a port 1..65535", name, v);
        *(id == O_SRC_PORT ? &o->flow.sport : &o->flow.dport) = (uint16_t)u;
        return 0;
    case O_STREAM:
        if (parse_u64(v, 0, UINT32_MAX, &u))
            return fail(err, errlen, "--%s '%s': expected 0..%u", name, v, UINT32_MAX);
        o->flow.stream = (uint32_t)u;
        return 0;
    case O_STREAMS:
        if (parse_u64(v, 1, PEER_MAX_STREAMS, &u))
            return fail(err, errlen, "--%s '%s': expected 1..%d", name, v, PEER_MAX_STREAMS);
        o->streams = (uint32_t)u;
        return 0;
    case O_RATE:
        if (parse_u64(v, 1, 1000000000, &o->rate))
            return fail(err, errlen, "--%s '%s': expected frames per second 1..1g", name, v);
        return 0;
    case O_BATCH:
        if (parse_u64(v, 1, PEER_BATCH_MAX, &u))
            return fail(err, errlen, "--%s '%s': expected 1..%d", name, v, PEER_BATCH_MAX);
        o->batch = (uint32_t)u;
        return 0;
    case O_MALFORMED:
        m = peer_malformed_parse(v);
        if (m <= PEER_MAL_NONE)
            return fail(err, errlen,
                        "--%s '%s': expected truncated, bad-ip-len, bad-udp-len, bad-csum, "
                        "garbage or runt",
                        name, v);
        o->malformed = (enum peer_malformed)m;
        return 0;
    case O_READY_FILE:
        if (*v == '\0')
            return fail(err, errlen, "--%s: expected a path", name);
        o->ready_file = v;
        return 0;
    case O_PROGRESS:
        o->progress = true;
        return 0;
    case O_VERIFY_CSUM:
        o->verify_csum = true;
        return 0;
    case O_LATENCY:
        o->latency = true;
        return 0;
    case O_PAYLOAD_ONLY:
        o->payload_only = true;
        return 0;
    case O_TX_VHOST:
    case O_RX_VHOST:
        /* the path goes into the result JSON unescaped */
        if (*v == '\0' || strpbrk(v, "\"\\,") || strlen(v) > PEER_VHOST_PATH_MAX)
            return fail(err, errlen, "--%s '%s': expected a socket path without '\"', '\\' or ','",
                        name, v);
        *(id == O_TX_VHOST ? &o->tx_vhost : &o->rx_vhost) = v;
        return 0;
    case O_LINK_WAIT:
        if (parse_seconds(v, &o->link_wait_ns))
            return fail(err, errlen, "--%s '%s': expected seconds > 0 (e.g. 2.5)", name, v);
        return 0;
    case O_START_ON_USR1:
        o->start_on_usr1 = true;
        return 0;
    case O_MAX_LAG:
        if (parse_seconds(v, &o->max_lag_ns))
            return fail(err, errlen, "--%s '%s': expected seconds > 0 (e.g. 0.0005)", name, v);
        return 0;
    case O_WARMUP:
        if (parse_seconds(v, &o->warmup_ns))
            return fail(err, errlen, "--%s '%s': expected seconds > 0 (e.g. 0.1)", name, v);
        return 0;
    case O_RX_IF:
        /* the name goes into the result JSON unescaped */
        if (*v == '\0' || strlen(v) >= IFNAMSIZ || strpbrk(v, "\"\\/: \t"))
            return fail(err, errlen, "--%s '%s': expected an interface name (1..%d characters)",
                        name, v, IFNAMSIZ - 1);
        o->rx_if = v;
        return 0;
    case O_STREAM_FILE:
        if (*v == '\0')
            return fail(err, errlen, "--%s: expected a path", name);
        o->stream_file = v;
        return 0;
    case O_SOCKBUF:
        if (parse_u64(v, 4096, INT32_MAX / 2, &o->sockbuf))
            return fail(err, errlen, "--%s '%s': expected 4096..%d bytes", name, v, INT32_MAX / 2);
        return 0;
    }
    return fail(err, errlen, "internal: unhandled option --%s", name);
}

/* vnperf-peer-dpdk's ports stand for --local/--remote. */
static int check_vhost(const struct peer_opts *o, bool have_local, char *err, size_t errlen)
{
    if (have_local || o->have_remote)
        return fail(err, errlen, "--local/--remote are the UDP peer's; vhost ports take none");
    if (o->mode == PEER_MODE_SEND && !o->tx_vhost)
        return fail(err, errlen, "send over vhost needs --tx-vhost SOCK (--rx-vhost only counts)");
    if (o->mode == PEER_MODE_COUNT && !o->rx_vhost)
        return fail(err, errlen, "count over vhost needs --rx-vhost SOCK");
    if (o->tx_vhost && o->rx_vhost && strcmp(o->tx_vhost, o->rx_vhost) == 0)
        return fail(err, errlen, "--tx-vhost and --rx-vhost name the same socket '%s'",
                    o->tx_vhost);
    if (o->payload_only)
        return fail(err, errlen, "--payload-only is for a kernel UDP socket, not a vhost port");
    if (o->rx_if)
        return fail(err, errlen, "--rx-if is the kernel peer's; vhost ports take none");
    if (o->warmup_ns && !o->rx_vhost)
        return fail(err, errlen, "--warmup needs --rx-vhost: the frames must come back");
    return 0;
}

/* send --stream-file: the file's streams have their own frames and
 * rates; the socket it counts on is QEMU's remote address. */
static int check_stream_file(const struct peer_opts *o, bool have_local, bool have_size, char *err,
                             size_t errlen)
{
    if (have_size || o->rate || o->streams != 1 || o->flow.stream || o->max_lag_ns ||
        o->malformed || o->payload_only)
        return fail(err, errlen,
                    "--stream-file sets each stream's frames and rate: no --size, --rate, "
                    "--stream(s), --max-lag, --malformed or --payload-only");
    if (o->tx_vhost || o->rx_vhost)
        return fail(err, errlen, "--stream-file is vnperf-peer's, on its UDP socket");
    if (!have_local && !o->rx_if)
        return fail(err, errlen,
                    "--stream-file needs --local IP:PORT (QEMU's remote: it counts there too) "
                    "or --rx-if IF");
    return 0;
}

static int check(const struct peer_opts *o, bool have_local, bool have_size, char *err,
                 size_t errlen)
{
    const char *mode = peer_mode_name(o->mode);

    bool vhost = o->tx_vhost || o->rx_vhost;

    if (o->stream_file && check_stream_file(o, have_local, have_size, err, errlen))
        return -EINVAL;
    if (o->rx_if && o->mode == PEER_MODE_SEND && !o->stream_file)
        return fail(err, errlen, "--rx-if does not apply to send without --stream-file");

    /* send counts what comes back only on vnperf-peer-dpdk's --rx-vhost */
    if (o->mode == PEER_MODE_SEND && !o->rx_vhost && (o->idle_ns || o->verify_csum || o->latency))
        return fail(err, errlen, "--%s does not apply to send without --rx-vhost (see --help)",
                    o->idle_ns   ? "idle"
                    : o->latency ? "latency"
                                 : "verify-csum");
    if (o->hold_ns && (vhost || o->stream_file))
        return fail(err, errlen, "--hold is the socket sender's: not with %s",
                    vhost ? "--tx-vhost/--rx-vhost" : "--stream-file (it counts its socket)");
    if (vhost && check_vhost(o, have_local, err, errlen))
        return -EINVAL;
    if (!vhost && o->link_wait_ns != PEER_LINK_WAIT_DEFAULT)
        return fail(err, errlen, "--link-wait needs --tx-vhost or --rx-vhost");
    if (!vhost && o->start_on_usr1 && !o->stream_file)
        return fail(err, errlen, "--start-on-usr1 needs --tx-vhost, --rx-vhost or --stream-file");
    if (o->max_lag_ns && !o->rate)
        return fail(err, errlen, "--max-lag needs --rate: flat out has no schedule");
    if (!vhost && o->warmup_ns)
        return fail(err, errlen, "--warmup needs --tx-vhost and --rx-vhost");
    if (o->rx_if && (have_local || o->have_remote))
        return fail(err, errlen, "--rx-if takes every frame of its interface: no --local/--remote");
    if (!vhost && !o->rx_if && o->mode != PEER_MODE_SEND && !have_local)
        return fail(err, errlen, "%s needs --local IP:PORT (the address QEMU sends to)", mode);
    if (!vhost && !o->rx_if && o->mode != PEER_MODE_COUNT && !o->have_remote)
        return fail(err, errlen, "%s needs --remote IP:PORT (QEMU's local address)", mode);
    if ((uint64_t)o->flow.stream + o->streams - 1 > UINT32_MAX)
        return fail(err, errlen, "--stream %u with --streams %u goes past stream id %u",
                    o->flow.stream, o->streams, UINT32_MAX);
    if (o->payload_only && o->malformed)
        return fail(err, errlen,
                    "--payload-only sends through the kernel's own headers: it "
                    "cannot send --malformed frames");
    return 0;
}

int peer_args_parse(int argc, char **argv, struct peer_opts *o, char *err, size_t errlen)
{
    bool have_local = false, have_size = false;
    int mode = -1, c, idx;

    set_defaults(o);
    if (argc < 2)
        return fail(err, errlen, "no mode given: count, send or reflect (see --help)");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return PEER_ARGS_HELP;
    for (size_t m = 0; m < sizeof(mode_names) / sizeof(mode_names[0]); m++) {
        if (strcmp(argv[1], mode_names[m]) == 0)
            mode = (int)m;
    }
    if (mode < 0)
        return fail(err, errlen, "unknown mode '%s': expected count, send or reflect", argv[1]);
    o->mode = (enum peer_mode)mode;

    /* argv[1] is the mode, so getopt sees it as the program name; optind 0
     * makes glibc start afresh on every call. */
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc - 1, argv + 1, "+:h", long_opts, &idx)) != -1) {
        if (c == O_HELP)
            return PEER_ARGS_HELP;
        if (c == '?')
            return fail(err, errlen, "unknown option '%s' (see --help)", argv[optind]);
        if (c == ':')
            return fail(err, errlen, "option '%s' needs a value", argv[optind]);
        if (!(opt_modes[c - O_LOCAL] & (1u << o->mode)))
            return fail(err, errlen, "--%s does not apply to %s (see --help)", long_opts[idx].name,
                        peer_mode_name(o->mode));
        if (apply(o, c, long_opts[idx].name, optarg, err, errlen))
            return -EINVAL;
        have_local = have_local || c == O_LOCAL;
        have_size = have_size || c == O_SIZE;
    }
    if (optind < argc - 1)
        return fail(err, errlen, "unexpected argument '%s' (see --help)", argv[optind + 1]);
    return check(o, have_local, have_size, err, errlen);
}
