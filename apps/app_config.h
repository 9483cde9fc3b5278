/* The appliance's config: what the config line's keys (docs/config.md)
 * hold once parsed. The key table is in apps/app_config_keys.c, read by
 * the kernel's generic key=value reader (kernel/config.h); the keys whose
 * values belong to an upper layer (app=, rate=, imix=, flows=, features=,
 * notify=, speed=) are checked after parsing (app_config_check). */
#ifndef VN_APP_CONFIG_H
#define VN_APP_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/config.h"

/* The CFG_ENUM keys' values: an enum in the order of its choices string,
 * side by side (test_config checks every name against its value). */
enum cfg_fault { CFG_FAULT_PF, CFG_FAULT_UD, CFG_FAULT_GP, CFG_FAULT_DE };
#define CFG_FAULT_CHOICES "pf|ud|gp|de"
enum cfg_txfull { CFG_TXFULL_WAIT, CFG_TXFULL_DROP };
#define CFG_TXFULL_CHOICES "wait|drop"
enum cfg_indirect { CFG_INDIRECT_AUTO, CFG_INDIRECT_ON, CFG_INDIRECT_OFF };
#define CFG_INDIRECT_CHOICES "auto|on|off"
enum cfg_role { CFG_ROLE_CLIENT, CFG_ROLE_SERVER };
#define CFG_ROLE_CHOICES "client|server"
enum cfg_proto { CFG_PROTO_UDP, CFG_PROTO_TCP };
#define CFG_PROTO_CHOICES "udp|tcp"
/* window=: from the unscaled 64 KiB a handshake offers (it cannot be taken
 * back) to lwIP's TCP_WND (apps/apps_net.c asserts it). */
#define CFG_WINDOW_MIN 65536
#define CFG_WINDOW_MAX (4u * 1024 * 1024)
#define CFG_QUEUES_MAX 8 /* queues=: VNET_MAX_PAIRS (apps/apps_net.c checks) */
#define CFG_VCPUS_MAX  8 /* vcpus=: SMP_MAX_CPUS (apps/app_smp.c checks) */
enum cfg_vcpu_test { CFG_VCPU_TEST_NONE, CFG_VCPU_TEST_NOSIPI };
#define CFG_VCPU_TEST_CHOICES "none|nosipi"
enum cfg_path { CFG_PATH_RAW, CFG_PATH_STACK };
#define CFG_PATH_CHOICES "raw|stack"

struct app_config {
    /* run */
    char app[32];
    uint64_t duration_s;
    uint64_t count;
    uint64_t seed;
    uint8_t verbose;
    /* self-test apps */
    uint64_t alloc_mb;
    uint8_t fault;                  /* enum cfg_fault */
    char hostile_case[CFG_STR_MAX]; /* app=hostile: case names or "all" */
    /* virtio-net (apps/apps_net.c hands these to the driver) */
    uint16_t ring;
    uint16_t kick_batch;
    uint16_t rx_refill;
    uint16_t rx_coalesce;
    uint32_t rx_coalesce_us;
    uint8_t txfull;              /* enum cfg_txfull */
    char features[CFG_LONG_MAX]; /* every switchable name off: vnperf conform's none */
    char notify[CFG_STR_MAX];
    uint16_t queues;
    uint8_t indirect;        /* enum cfg_indirect */
    uint64_t qreset_at;      /* gen: TX, sink: RX queue reset after this many frames; 0: none */
    char sets[CFG_LONG_MAX]; /* app=reneg: feature sets (apps/reneg_sets.h) */
    uint8_t back;            /* app=reneg: the host end sends each frame back (docs/apps.md) */
    uint16_t stream_s;       /* app=reneg: seconds of TCP stream per set (apps/reneg_stream.h) */
    uint16_t uso;            /* gen: payload bytes per segment the device cuts (HOST_USO); 0: off */
    /* control queue commands at start (apps/apps_ctrl.c) */
    uint8_t promisc, allmulti, mac_set;
    uint16_t vlan;       /* 0: none */
    uint16_t netif_vlan; /* lwIP's 802.1Q tag (net/net_vlan.h); 0: untagged */
    uint8_t netif_pcp;
    uint16_t netif_svlan; /* an 802.1ad service tag outside netif_vlan's; 0: none */
    /* NOTF_COAL / VQ_NOTF_COAL at start where given (ethtool -C's names) */
    uint32_t coal_tx_frames, coal_tx_usecs, coal_rx_frames, coal_rx_usecs;
    uint16_t vcpus;
    uint8_t vcpu_test; /* enum cfg_vcpu_test */
    /* addressing */
    uint32_t ip, mask, gw, dst_ip; /* network byte order */
    uint8_t ip6[16], dst_ip6[16];  /* network byte order; given or all zero */
    uint8_t mac[6], dst_mac[6];
    uint8_t dhcp;
    uint16_t src_port, dst_port;
    /* traffic */
    uint64_t size;
    char rate[CFG_STR_MAX];
    uint64_t burst;
    uint64_t sessions;
    uint64_t msg_size;
    uint64_t window;
    uint8_t role;  /* enum cfg_role */
    uint8_t proto; /* enum cfg_proto */
    uint8_t path;  /* enum cfg_path */
    char imix[CFG_STR_MAX];
    char flows[CFG_STR_MAX];
    uint64_t req_size, resp_size;
    uint64_t loops;          /* replay: times through the capture */
    char speed[CFG_STR_MAX]; /* replay: multiplier of the recorded timing, or max */
    uint64_t interval_ms;
    uint64_t idle_ms;       /* fwd: end this long after the last frame in on the first NIC */
    struct cfg_given given; /* which keys the line gave (app_config_given) */
};

/* The keys (apps/app_config_keys.c). */
extern const struct cfg_table app_config_table;

/* The config text (len bytes, followed by a NUL) parsed into c with the
 * kernel's reader: 0, or -EINVAL with one line in err. */
int app_config_parse(struct app_config *c, const char *text, size_t len, char *err, size_t errlen);

/* Whether the line gave key (not its default). */
bool app_config_given(const struct app_config *c, const char *key);

/* Text of an enum key's value (e.g. fault=). */
const char *app_config_enum_name(const char *key, unsigned idx);

/* 0, or -EINVAL with one line naming the key, the value and why in err
 * (the parser's own format). */
int app_config_check(const struct app_config *c, char *err, size_t errlen);

#endif
