/* The stream file as the guest gets it (fw_cfg opt/vnperf/streams): the
 * runner checks the TOML (tools/vnperflib/run/streamfile.py) and encodes it
 * as text, one "s" line per stream and one "v" line per field-engine var
 * after it (docs/streams.md, "Guest encoding"). This parser trusts none
 * of it: every key is required once, every value range-checked. */
#ifndef VN_STREAM_SPEC_H
#define VN_STREAM_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "apps/imix.h"
#include "apps/rate.h"

#define STREAMS_MAX       16
#define STREAM_VARS_MAX   4
#define STREAM_TEXT_MAX   4096 /* bytes of the fw_cfg file, NUL included */
#define STREAM_VLANS_MAX  2    /* 802.1Q, or QinQ (802.1ad outer, 802.1Q inner) */
#define STREAM_GAP_NS_MAX (60ull * 1000000000ull)
#define STREAM_FRAMES_MAX 1000000000000ull

enum stream_field {
    SF_SRC_MAC,
    SF_DST_MAC,
    SF_VLAN, /* the inner (or only) tag's id */
    SF_OUTER_VLAN,
    SF_SRC_IP, /* IPv6: the low 32 bits */
    SF_DST_IP,
    SF_FLOW_LABEL,
    SF_TOS, /* IPv6: traffic class */
    SF_SRC_PORT,
    SF_DST_PORT,
    SF_FIELDS
};
/* The L4 header of a stream's frames (docs/streams.md): ICMP is an echo
 * request, ICMPv6's for an IPv6 stream. */
enum stream_proto { SPROTO_UDP, SPROTO_TCP, SPROTO_ICMP, SPROTO_PROTOS };
enum stream_op { SOP_INC, SOP_DEC, SOP_RANDOM, SOP_OPS };
enum stream_mode { SMODE_CONTINUOUS, SMODE_BURST, SMODE_MULTI_BURST, SMODE_POISSON, SMODE_MODES };
/* Who sends a stream: the guest's gen (tx), or the host peer toward the
 * guest (rx: gen counts it, docs/streams.md "Both ways"). */
enum stream_dir { SDIR_TX, SDIR_RX, SDIR_DIRS };

struct stream_var {
    uint8_t field;         /* enum stream_field */
    uint8_t op;            /* enum stream_op */
    uint64_t lo, hi, step; /* lo <= hi, hi - lo < 2^32, step 1..2^32 */
};

struct stream_spec {
    uint8_t ip;    /* 4 or 6 */
    uint8_t proto; /* enum stream_proto */
    uint8_t nvlan;
    uint16_t vlan[STREAM_VLANS_MAX]; /* outer first */
    bool has_smac, has_dmac;         /* else the NIC's / the peer's */
    uint8_t smac[6], dmac[6];
    uint32_t sip4, dip4; /* host order; 0: ip= / dst_ip= */
    uint8_t sip6[16], dip6[16];
    uint16_t sport, dport; /* 0: src_port= / dst_port= (ICMP: none) */
    uint8_t tos, ttl;
    uint32_t flow_label;
    bool size_range;   /* sizes lo..hi in turn (size[0], size[1]) */
    struct imix sizes; /* else: a mix (one size is a mix of one) */
    struct rate rate;
    uint8_t mode; /* enum stream_mode */
    uint64_t frames, gap_ns, bursts;
    uint8_t dir; /* enum stream_dir */
    uint8_t nvars;
    struct stream_var var[STREAM_VARS_MAX];
};

/* Parses the whole text (NUL-terminated) into out[0 .. *n). 0, or -EINVAL
 * with one line naming the line number and the key in why. */
int stream_spec_parse(const char *text, struct stream_spec *out, unsigned *n, char *why,
                      size_t whylen);

/* The config line's one-stream shorthand (docs/streams.md) as a stream:
 * IPv4 UDP with the config line's addresses and ports, TTL 64, the sizes
 * of size= or imix= (m), the rate of rate= (r), continuous, no var. */
void stream_spec_one(const struct imix *m, const struct rate *r, struct stream_spec *s);

/* Bits of a field's value (48 for MACs, 12 for VLAN ids, ...). */
unsigned stream_field_bits(enum stream_field f);

/* The bytes of a stream's headers before its payload stamp: Ethernet, the
 * tags, IPv4 or IPv6, UDP, TCP or ICMP. */
unsigned stream_spec_hdr_len(const struct stream_spec *s);

/* The stamp a stream's smallest frame must hold: UDP's 18 bytes, or the
 * whole 24 with the magic, without which the receivers cannot tell a TCP
 * or ICMP stream's frame from the stack's (net/pkt.h, PKT_STAMPED). */
static inline unsigned stream_spec_stamp_min(const struct stream_spec *s)
{
    return s->proto == SPROTO_UDP ? 18u : 24u;
}

#endif
