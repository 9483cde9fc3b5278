/* The config line: "key=value" words from the PVH command line or the
 * fw_cfg file opt/vnperf/config. The key table (kernel/config_keys.c) is the
 * public interface, documented in docs/config.md. */
#ifndef VN_CONFIG_H
#define VN_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CFG_STR_MAX 128

enum cfg_type {
    CFG_UINT, /* decimal (or 0x hex), k/m/g suffix allowed, within [min, max] */
    CFG_BOOL, /* 0/1, on/off, yes/no, true/false */
    CFG_ENUM, /* one of choices ("a|b|c"); stored as the index */
    CFG_IP4,  /* dotted quad; stored in network byte order */
    CFG_MAC,  /* xx:xx:xx:xx:xx:xx */
    CFG_STR,  /* free text checked by the key's parse hook, if any */
};

struct cfg_key {
    const char *name;
    enum cfg_type type;
    size_t offset; /* into struct vn_config */
    size_t size;   /* of the field: CFG_UINT 1, 2, 4 or 8; CFG_STR its capacity */
    uint64_t min, max;
    const char *choices; /* CFG_ENUM */
    const char *def;     /* default as text, parsed like user input; NULL: none */
    const char *help;
    /* Extra check for CFG_STR (and any type): 0 or -EINVAL with why. */
    int (*check)(const char *val, char *why, size_t whylen);
};

enum cfg_source { CFG_SRC_NONE, CFG_SRC_CMDLINE, CFG_SRC_FWCFG };

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
 * back) to lwIP's TCP_WND (net_tcp.c asserts it). */
#define CFG_WINDOW_MIN 65536
#define CFG_WINDOW_MAX (4u * 1024 * 1024)
#define CFG_QUEUES_MAX 8 /* queues=: VNET_MAX_PAIRS (apps/apps_net.c checks) */
enum cfg_path { CFG_PATH_RAW, CFG_PATH_STACK };
#define CFG_PATH_CHOICES "raw|stack"

struct vn_config {
    /* run */
    char app[32];
    uint64_t duration_s;
    uint64_t count;
    uint64_t seed;
    uint8_t verbose;
    /* self-test apps */
    uint64_t alloc_mb;
    uint8_t fault; /* enum cfg_fault */
    /* virtio-net */
    uint16_t ring;
    uint16_t kick_batch;
    uint16_t rx_refill;
    uint16_t rx_coalesce;
    uint32_t rx_coalesce_us;
    uint8_t txfull; /* enum cfg_txfull */
    char features[CFG_STR_MAX];
    char notify[CFG_STR_MAX];
    uint16_t queues;
    uint8_t indirect; /* enum cfg_indirect */
    /* addressing */
    uint32_t ip, mask, gw, dst_ip;
    uint8_t mac[6], dst_mac[6];
    bool have_mac, have_dst_mac, have_ip, have_dst_ip;
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
    uint64_t interval_ms;
    uint64_t idle_ms; /* fwd: end this long after the last frame in on the first NIC */
    /* which keys the user gave (bit per key index), so apps can tell a
     * default from a choice */
    uint64_t given[2];
};

extern struct vn_config cfg;
extern const struct cfg_key cfg_keys[];
extern const size_t cfg_nkeys;

/* Parses one config string into c (defaults first). On error writes one
 * line naming the key, the value and what is allowed into err and returns
 * -EINVAL. Words the transport owns (virtio_mmio.device=...) are skipped. */
int config_parse(struct vn_config *c, const char *line, char *err, size_t errlen);

/* config_parse for text of len bytes read from outside (the fw_cfg file),
 * followed by a NUL: a NUL inside it would cut the config silently, so it
 * is refused with its offset. */
int config_parse_text(struct vn_config *c, const char *text, size_t len, char *err, size_t errlen);

bool config_given(const struct vn_config *c, const char *key);

/* Number with the config syntax (decimal, 0x hex, k/m/g, ki/mi/gi):
 * 0, -EINVAL or -ERANGE. */
int config_parse_uint(const char *s, uint64_t *out);

/* Finds the key's table index, -1 if none. */
int config_key_index(const char *name);

/* Text of an enum choice (e.g. the app name). */
const char *config_enum_name(const char *key, unsigned idx);

#endif
