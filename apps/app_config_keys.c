/* The config keys: the appliance's public interface (docs/config.md),
 * read by the kernel's generic reader. Keys whose values need more than
 * the table (app=, rate=, imix=, flows=, features=, notify=,
 * speed=) are checked
 * after parsing (apps/app_config.c), so this file and the reader build
 * alone (tests/unit test_config, tests/fuzz fuzz_config). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "apps/app_config.h"

#define FIELD(f) offsetof(struct app_config, f), sizeof(((struct app_config *)0)->f)
#define U(name, f, lo, hi, d, h)                                                                   \
    {                                                                                              \
        name, CFG_UINT, FIELD(f), lo, hi, NULL, d, h, NULL                                         \
    }
#define B(name, f, d, h)                                                                           \
    {                                                                                              \
        name, CFG_BOOL, FIELD(f), 0, 1, NULL, d, h, NULL                                           \
    }
#define E(name, f, ch, d, h)                                                                       \
    {                                                                                              \
        name, CFG_ENUM, FIELD(f), 0, 0, ch, d, h, NULL                                             \
    }
#define IP(name, f, d, h)                                                                          \
    {                                                                                              \
        name, CFG_IP4, FIELD(f), 0, 0, NULL, d, h, NULL                                            \
    }
#define IP6(name, f, h, chk)                                                                       \
    {                                                                                              \
        name, CFG_IP6, FIELD(f), 0, 0, NULL, NULL, h, chk                                          \
    }
#define MAC(name, f, h)                                                                            \
    {                                                                                              \
        name, CFG_MAC, FIELD(f), 0, 0, NULL, NULL, h, NULL                                         \
    }
#define S(name, f, d, h, chk)                                                                      \
    {                                                                                              \
        name, CFG_STR, FIELD(f), 0, 0, NULL, d, h, chk                                             \
    }

/* Split rings of any power-of-two size up to 32768 (virtio 1.2 s2.7). */
static int ring_check(const char *val, char *why, size_t whylen)
{
    uint64_t v = 0;
    if (config_parse_uint(val, &v) < 0 || v == 0 || (v >= 16 && v <= 32768 && (v & (v - 1)) == 0))
        return 0;
    snprintf(why, whylen, "ring size must be 0 (device maximum) or a power of two 16..32768");
    return -EINVAL;
}

/* A unicast address a host may own or be sent to: not unspecified or
 * loopback (RFC 4291 s2.5.2, s2.5.3), not multicast (s2.7), not
 * link-local (s2.5.6: the guest makes its own from the MAC, and a
 * link-local peer would need a zone). */
static int ip6_unicast_check(const char *val, char *why, size_t whylen)
{
    uint8_t a[16];
    static const uint8_t loop[16] = {[15] = 1};
    if (config_parse_ip6(val, a) < 0)
        return 0; /* the type's own message */
    const char *bad = NULL;
    uint8_t any = 0;
    for (int i = 0; i < 16; i++)
        any |= a[i];
    if (!any)
        bad = "the unspecified address";
    else if (!memcmp(a, loop, sizeof(a)))
        bad = "the loopback address";
    else if (a[0] == 0xff)
        bad = "a multicast address";
    else if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
        bad = "link-local (the guest's own is made from its MAC)";
    if (!bad)
        return 0;
    snprintf(why, whylen, "%s; give a global or unique-local unicast address (e.g. fd00::2)", bad);
    return -EINVAL;
}

static const struct cfg_key keys[] = {
    /* run */
    S("app", app, "selftest", "what to run (apps/app_table.c)", NULL),
    U("duration", duration_s, 0, 86400, "0", "seconds to run; 0: the app's default"),
    U("count", count, 0, 1000000000000000ull, "0", "frames/transactions; 0: no limit"),
    U("seed", seed, 0, UINT64_MAX, "1", "seed for random flows and payloads"),
    B("verbose", verbose, "0", "more console output"),
    U("interval_ms", interval_ms, 100, 60000, "1000", "sample line interval"),
    U("idle_ms", idle_ms, 0, 3600000, "0",
      "fwd: end this long after the last frame in on the first NIC; 0: off"),
    /* self-test apps */
    U("alloc_mb", alloc_mb, 1, 1048576, "16", "app=alloc: MiB to allocate"),
    E("fault", fault, CFG_FAULT_CHOICES, "pf", "app=fault: which exception to raise"),
    S("case", hostile_case, "all", "app=hostile: case names, comma-separated, or all", NULL),
    /* virtio-net */
    {"ring", CFG_UINT, FIELD(ring), 0, 32768, NULL, "0", "virtqueue size; 0: the device's maximum",
     ring_check},
    U("kick_batch", kick_batch, 0, 32768, "0", "TX frames per kick; 0: one kick per burst"),
    U("rx_refill", rx_refill, 1, 32768, "64", "RX buffers re-posted per refill (one kick each)"),
    U("rx_coalesce", rx_coalesce, 1, 32768, "1",
      "notify=irq|hybrid: frames before a halt's RX interrupt (EVENT_IDX)"),
    U("rx_coalesce_us", rx_coalesce_us, 1, 1000000, "1000",
      "with rx_coalesce= above 1: longest halt waiting for them"),
    E("txfull", txfull, CFG_TXFULL_CHOICES, "wait",
      "on a full TX ring: wait (reclaim, retry) or drop"),
    S("features", features, "", "feature bits to switch off, e.g. -event_idx,-mrg_rxbuf", NULL),
    S("sets", sets, "",
      "app=reneg: feature sets separated by /, e.g. all/-event_idx,-ring_packed/-mrg_rxbuf", NULL),
    B("back", back, "0",
      "app=reneg: the host end sends every frame back: each set's counted back, MTU frames too"),
    U("stream_s", stream_s, 0, 60, "0",
      "app=reneg: seconds of one TCP stream per set (iperf 2 client to dst_ip= port 5001) before "
      "its frames; 0: none"),
    U("queues", queues, 1, CFG_QUEUES_MAX, "1",
      "queue pairs (VIRTIO_NET_F_MQ; QEMU: mq=on,vectors=2N+2 and a netdev with queues=N)"),
    U("vcpus", vcpus, 0, CFG_VCPUS_MAX, "0",
      "CPUs to start, one per queue pair; 0: every CPU the ACPI MADT lists, at most queues="),
    E("vcpu_test", vcpu_test, CFG_VCPU_TEST_CHOICES, "none",
      "test only: nosipi sends the APs INIT but no SIPI, so none answers (exit 10)"),
    E("indirect", indirect, CFG_INDIRECT_CHOICES, "auto",
      "VIRTIO_F_INDIRECT_DESC: auto (where offered), on (refused where not), off"),
    U("qreset_at", qreset_at, 0, 1000000000000000ull, "0",
      "VIRTIO_F_RING_RESET: gen resets its TX queue, sink its RX queue after this many frames"),
    U("uso", uso, 0, 65535, "0",
      "gen, reneg: UDP segmentation by the device (VIRTIO_NET_F_HOST_USO), payload bytes per "
      "segment; 0: off"),
    B("promisc", promisc, "0",
      "VIRTIO_NET_CTRL_RX_PROMISC at start, on or off (given: the command is sent)"),
    B("allmulti", allmulti, "0", "VIRTIO_NET_CTRL_RX_ALLMULTI at start, on or off (given: sent)"),
    B("mac_set", mac_set, "0",
      "VIRTIO_NET_CTRL_MAC_ADDR_SET of mac= (or the NIC's) at start, with a one-entry unicast "
      "table"),
    U("vlan", vlan, 0, 4095, "0",
      "VIRTIO_NET_CTRL_VLAN_ADD of this VLAN at start (CTRL_VLAN: other tags dropped); 0: none"),
    U("netif_vlan", netif_vlan, 0, 4094, "0",
      "lwIP's frames 802.1Q-tagged with this VLAN id (1..4094), only frames of it taken; 0: "
      "untagged"),
    U("netif_pcp", netif_pcp, 0, 7, "0", "with netif_vlan=: the tag's priority (PCP)"),
    U("netif_svlan", netif_svlan, 0, 4094, "0",
      "with netif_vlan=: an 802.1ad service tag (QinQ) with this VLAN id (1..4094) outside "
      "lwIP's 802.1Q tag, only frames inside it taken; 0: none"),
    U("coal_tx_frames", coal_tx_frames, 0, UINT32_MAX, "0",
      "NOTF_COAL at start: frames before a TX used-buffer notification (given: sent)"),
    U("coal_tx_usecs", coal_tx_usecs, 0, UINT32_MAX, "0",
      "NOTF_COAL at start: microseconds before a TX used-buffer notification (given: sent)"),
    U("coal_rx_frames", coal_rx_frames, 0, UINT32_MAX, "0",
      "NOTF_COAL at start: frames before an RX used-buffer notification (given: sent)"),
    U("coal_rx_usecs", coal_rx_usecs, 0, UINT32_MAX, "0",
      "NOTF_COAL at start: microseconds before an RX used-buffer notification (given: sent)"),
    S("notify", notify, "poll", "used-buffer notifications: poll|irq|hybrid, or rx:MODE,tx:MODE",
      NULL),
    /* addressing */
    IP("ip", ip, "10.0.0.2", "our IPv4 address"),
    IP("mask", mask, "255.255.255.0", "netmask"),
    IP("gw", gw, "0.0.0.0", "gateway"),
    B("dhcp", dhcp, "0", "get the address by DHCP"),
    IP("dst_ip", dst_ip, "10.0.0.1", "peer IPv4 address"),
    IP6("ip6", ip6, "our IPv6 address, on-link /64 (none: link-local only)", ip6_unicast_check),
    IP6("dst_ip6", dst_ip6, "peer IPv6 address: rr/iperf clients connect over IPv6",
        ip6_unicast_check),
    MAC("mac", mac, "source MAC for raw frames (default: the NIC's)"),
    MAC("dst_mac", dst_mac, "peer MAC (default: ARP for dst_ip)"),
    U("src_port", src_port, 1, 65535, "9000", "UDP/TCP source port"),
    U("dst_port", dst_port, 1, 65535, "9000", "UDP/TCP destination port"),
    /* traffic */
    U("size", size, 60, 65535, "64", "Ethernet frame length without FCS"),
    S("rate", rate, "", "pacing: pps (e.g. 100k) or bit/s (e.g. 1gbps); empty: as fast as possible",
      NULL),
    U("burst", burst, 1, 1024, "32", "frames per TX burst"),
    U("sessions", sessions, 1, 128, "1", "parallel sessions (rr, iperf)"),
    U("msg_size", msg_size, 1, 65535, "16384", "iperf client: bytes per write (netperf -m)"),
    U("window", window, CFG_WINDOW_MIN, CFG_WINDOW_MAX, "262144",
      "iperf server: TCP receive window per stream, bytes (iperf -w)"),
    E("role", role, CFG_ROLE_CHOICES, "client", "rr/iperf role"),
    E("proto", proto, CFG_PROTO_CHOICES, "udp", "rr protocol"),
    E("path", path, CFG_PATH_CHOICES, "raw", "gen: raw fast path or lwIP udp_sendto"),
    S("imix", imix, "", "size:weight list, e.g. 64:7,594:4,1518:1", NULL),
    S("flows", flows, "", "flow ranges (docs/config.md)", NULL),
    U("req_size", req_size, 1, 65000, "1", "rr request bytes"),
    U("resp_size", resp_size, 1, 65000, "1", "rr response bytes"),
    U("loops", loops, 1, 1000000, "1", "replay: times through the capture"),
    S("speed", speed, "1", "replay: multiplier of the recorded timing (2: twice as fast), or max",
      NULL),
};

const struct cfg_table app_config_table = {keys, sizeof(keys) / sizeof(keys[0])};

_Static_assert(sizeof(keys) / sizeof(keys[0]) <= CFG_KEYS_MAX, "struct cfg_given holds every key");

int app_config_parse(struct app_config *c, const char *text, size_t len, char *err, size_t errlen)
{
    return config_parse_text(&app_config_table, c, sizeof(*c), &c->given, text, len, err, errlen);
}

bool app_config_given(const struct app_config *c, const char *key)
{
    return config_given(&app_config_table, &c->given, key);
}

const char *app_config_enum_name(const char *key, unsigned idx)
{
    return config_enum_name(&app_config_table, key, idx);
}
