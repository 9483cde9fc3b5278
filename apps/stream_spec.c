#include "apps/stream_spec.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/config.h"

#define SPEC_MAGIC    "vnperf-streams 2" /* 2: proto= */
#define SPEC_WORD_MAX 64

static const char *const field_names[SF_FIELDS] = {
    "src_mac", "dst_mac",    "vlan", "outer_vlan", "src_ip",
    "dst_ip",  "flow_label", "tos",  "src_port",   "dst_port"};
static const uint8_t field_bits[SF_FIELDS] = {48, 48, 12, 12, 32, 32, 20, 8, 16, 16};
static const char *const op_names[SOP_OPS] = {"inc", "dec", "random"};
static const char *const proto_names[SPROTO_PROTOS] = {"udp", "tcp", "icmp"};
static const char *const mode_names[SMODE_MODES] = {"continuous", "burst", "multi_burst",
                                                    "poisson"};
static const char *const dir_names[SDIR_DIRS] = {"tx", "rx"};

unsigned stream_field_bits(enum stream_field f)
{
    return f < SF_FIELDS ? field_bits[f] : 0;
}

static int name_index(const char *v, const char *const *names, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0)
            return (int)i;
    return -1;
}

static int num(const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t x;
    if (config_parse_uint(v, &x) < 0 || x < lo || x > hi)
        return -EINVAL;
    *out = x;
    return 0;
}

/* n bytes from 2n hex digits ("0": absent). */
static int hex_bytes(const char *v, uint8_t *out, size_t n, bool *given)
{
    if (given && strcmp(v, "0") == 0) {
        *given = false;
        return 0;
    }
    if (strlen(v) != 2 * n)
        return -EINVAL;
    for (size_t i = 0; i < 2 * n; i++) {
        char c = v[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return -EINVAL;
        out[i / 2] = (uint8_t)(i % 2 ? out[i / 2] | d : d << 4);
    }
    if (given)
        *given = true;
    return 0;
}

/* "A/B": the tags, outer first; "0": none. */
static int vlans(const char *v, struct stream_spec *s)
{
    s->nvlan = 0;
    if (strcmp(v, "0") == 0)
        return 0;
    char w[SPEC_WORD_MAX];
    snprintf(w, sizeof(w), "%s", v);
    for (char *p = w, *q; p; p = q) {
        uint64_t id;
        q = strchr(p, '/');
        if (q)
            *q++ = 0;
        if (s->nvlan == STREAM_VLANS_MAX || num(p, 1, 4094, &id) < 0)
            return -EINVAL;
        s->vlan[s->nvlan++] = (uint16_t)id;
    }
    return 0;
}

/* "LO-HI" (a range) or "S:W/S:W..." (a mix), frame lengths without FCS. */
static int sizes(const char *v, struct stream_spec *s)
{
    char w[SPEC_WORD_MAX];
    uint64_t a, b;
    snprintf(w, sizeof(w), "%s", v);
    struct imix *m = &s->sizes;
    memset(m, 0, sizeof(*m));
    char *dash = strchr(w, '-');
    s->size_range = dash != NULL;
    if (dash) {
        *dash = 0;
        if (num(w, 60, 9014, &a) < 0 || num(dash + 1, a, 9014, &b) < 0)
            return -EINVAL;
        m->n = 2;
        m->size[0] = (uint16_t)a;
        m->size[1] = (uint16_t)b;
        return 0;
    }
    for (char *p = w, *q; p; p = q) {
        q = strchr(p, '/');
        if (q)
            *q++ = 0;
        char *colon = strchr(p, ':');
        if (!colon || m->n == IMIX_MAX_SIZES)
            return -EINVAL;
        *colon = 0;
        if (num(p, 60, 9014, &a) < 0 || num(colon + 1, 1, IMIX_MAX_WEIGHT, &b) < 0 ||
            m->cycle + b > IMIX_MAX_WEIGHT)
            return -EINVAL;
        m->size[m->n] = (uint16_t)a;
        m->weight[m->n++] = (uint16_t)b;
        m->cycle += (unsigned)b;
    }
    return 0;
}

/* "max", "pps:N" or "bps:N" within rate.h's limits. */
static int rate_word(const char *v, struct rate *r)
{
    uint64_t n;
    r->unit = RATE_UNLIMITED;
    r->per_s = 0;
    if (strcmp(v, "max") == 0)
        return 0;
    if (strncmp(v, "pps:", 4) == 0 && num(v + 4, 1, 1000000000ull, &n) == 0)
        r->unit = RATE_PPS;
    else if (strncmp(v, "bps:", 4) == 0 && num(v + 4, 1, 1000000000000ull, &n) == 0)
        r->unit = RATE_BPS;
    else
        return -EINVAL;
    r->per_s = n;
    return 0;
}

enum {
    K_ID,
    K_IP,
    K_PROTO,
    K_VLAN,
    K_SMAC,
    K_DMAC,
    K_SIP,
    K_DIP,
    K_SPORT,
    K_DPORT,
    K_TOS,
    K_TTL,
    K_FL,
    K_SIZE,
    K_RATE,
    K_MODE,
    K_FRAMES,
    K_GAP,
    K_BURSTS,
    K_DIR,
    K_KEYS
};
static const char *const s_keys[K_KEYS] = {
    "id",  "ip",  "proto", "vlan", "smac", "dmac", "sip",    "dip",    "sport",  "dport",
    "tos", "ttl", "fl",    "size", "rate", "mode", "frames", "gap_ns", "bursts", "dir"};
_Static_assert(K_KEYS <= 32, "a bit per key");

static int addr(const char *v, struct stream_spec *s, bool src)
{
    uint64_t a;
    if (s->ip == 6)
        return hex_bytes(v, src ? s->sip6 : s->dip6, 16, NULL);
    if (num(v, 0, UINT32_MAX, &a) < 0)
        return -EINVAL;
    *(src ? &s->sip4 : &s->dip4) = (uint32_t)a;
    return 0;
}

/* A key of an "s" line whose value is a number narrowed into its field. */
static int s_number(int k, const char *v, struct stream_spec *s)
{
    uint64_t x = 0;
    int rc;
    switch (k) {
    case K_IP:
        rc = num(v, 4, 6, &x);
        s->ip = (uint8_t)x;
        return rc || x == 5 ? -EINVAL : 0;
    case K_SPORT:
        rc = num(v, 0, 65535, &x);
        s->sport = (uint16_t)x;
        return rc;
    case K_DPORT:
        rc = num(v, 0, 65535, &x);
        s->dport = (uint16_t)x;
        return rc;
    case K_TOS:
        rc = num(v, 0, 255, &x);
        s->tos = (uint8_t)x;
        return rc;
    case K_TTL:
        rc = num(v, 1, 255, &x);
        s->ttl = (uint8_t)x;
        return rc;
    default: /* K_FL */
        rc = num(v, 0, (1u << 20) - 1, &x);
        s->flow_label = (uint32_t)x;
        return rc;
    }
}

/* A key of an "s" line whose value is one of its names. */
static int s_name(int k, const char *v, struct stream_spec *s)
{
    int rc;
    switch (k) {
    case K_PROTO:
        rc = name_index(v, proto_names, SPROTO_PROTOS);
        s->proto = (uint8_t)rc;
        break;
    case K_MODE:
        rc = name_index(v, mode_names, SMODE_MODES);
        s->mode = (uint8_t)rc;
        break;
    default: /* K_DIR */
        rc = name_index(v, dir_names, SDIR_DIRS);
        s->dir = (uint8_t)rc;
        break;
    }
    return rc < 0 ? -EINVAL : 0;
}

/* One key of an "s" line; id is the stream's index. */
static int s_value(int k, const char *v, struct stream_spec *s, unsigned id)
{
    uint64_t x = 0;
    switch (k) {
    case K_ID:
        return num(v, id, id, &x);
    case K_IP:
    case K_SPORT:
    case K_DPORT:
    case K_TOS:
    case K_TTL:
    case K_FL:
        return s_number(k, v, s);
    case K_VLAN:
        return vlans(v, s);
    case K_SMAC:
        return hex_bytes(v, s->smac, 6, &s->has_smac);
    case K_DMAC:
        return hex_bytes(v, s->dmac, 6, &s->has_dmac);
    case K_SIP:
        return addr(v, s, true);
    case K_DIP:
        return addr(v, s, false);
    case K_SIZE:
        return sizes(v, s);
    case K_RATE:
        return rate_word(v, &s->rate);
    case K_FRAMES:
        return num(v, 0, STREAM_FRAMES_MAX, &s->frames);
    case K_GAP:
        return num(v, 0, STREAM_GAP_NS_MAX, &s->gap_ns);
    case K_BURSTS:
        return num(v, 0, STREAM_FRAMES_MAX, &s->bursts);
    default: /* K_PROTO, K_MODE, K_DIR */
        return s_name(k, v, s);
    }
}

unsigned stream_spec_hdr_len(const struct stream_spec *s)
{
    return 14u + 4u * s->nvlan + (s->ip == 6 ? 40u : 20u) + (s->proto == SPROTO_TCP ? 20u : 8u);
}

/* What one "s" line's values must agree on. NULL or the reason. */
static const char *s_whole(const struct stream_spec *s)
{
    static const uint8_t zero[16];
    unsigned smallest = s->sizes.size[0];
    for (unsigned i = 1; i < s->sizes.n; i++)
        smallest = s->sizes.size[i] < smallest ? s->sizes.size[i] : smallest;
    if (smallest < stream_spec_hdr_len(s) + stream_spec_stamp_min(s))
        return "size: below the headers and the stamp";
    if (s->proto == SPROTO_ICMP && (s->sport || s->dport))
        return "sport/dport: an ICMP stream has no ports";
    if (s->ip == 6 && (!memcmp(s->sip6, zero, 16) || !memcmp(s->dip6, zero, 16)))
        return "sip/dip: an IPv6 stream has both addresses";
    if (s->ip == 4 && s->flow_label)
        return "fl: IPv6 only";
    bool frames = s->mode == SMODE_BURST || s->mode == SMODE_MULTI_BURST;
    bool multi = s->mode == SMODE_MULTI_BURST;
    if (frames != (s->frames != 0) || multi != (s->gap_ns != 0) || multi != (s->bursts != 0))
        return "mode: frames= (burst, multi_burst), gap_ns= and bursts= (multi_burst) only "
               "and not 0";
    if (s->mode == SMODE_POISSON && s->rate.unit == RATE_UNLIMITED)
        return "mode: poisson needs a rate";
    return NULL;
}

/* A "v" line's var, once parsed: it fits its field and the stream. */
static const char *v_whole(const struct stream_spec *s, const struct stream_var *v)
{
    if ((v->field == SF_VLAN && s->nvlan < 1) || (v->field == SF_OUTER_VLAN && s->nvlan < 2) ||
        (v->field == SF_FLOW_LABEL && s->ip != 6) ||
        (s->proto == SPROTO_ICMP && (v->field == SF_SRC_PORT || v->field == SF_DST_PORT)))
        return "f: the stream's frames have no such field";
    uint64_t top = (1ull << field_bits[v->field]) - 1;
    if (v->lo > v->hi || v->hi > top || v->hi - v->lo > UINT32_MAX)
        return "lo/hi: lo <= hi, within the field, at most 2^32 values";
    for (unsigned i = 0; i + 1 < s->nvars; i++)
        if (s->var[i].field == v->field)
            return "f: a second var on the field";
    return NULL;
}

static int v_value(const char *k, const char *v, struct stream_var *var, unsigned *seen)
{
    static const char *const keys[] = {"f", "op", "lo", "hi", "step"};
    int i = name_index(k, keys, 5), rc;
    if (i < 0 || (*seen >> i & 1))
        return -EINVAL;
    *seen |= 1u << i;
    switch (i) {
    case 0:
        rc = name_index(v, field_names, SF_FIELDS);
        var->field = (uint8_t)rc;
        return rc < 0 ? -EINVAL : 0;
    case 1:
        rc = name_index(v, op_names, SOP_OPS);
        var->op = (uint8_t)rc;
        return rc < 0 ? -EINVAL : 0;
    case 2:
        return num(v, 0, (1ull << 48) - 1, &var->lo);
    case 3:
        return num(v, 0, (1ull << 48) - 1, &var->hi);
    default:
        return num(v, 1, 1ull << 32, &var->step);
    }
}

/* The words of one line after its first ("s" or "v"), each key=value. */
static int line_words(char *p, bool s_line, struct stream_spec *s, unsigned id, const char **bad)
{
    unsigned seen = 0;
    struct stream_var *var = &s->var[s->nvars - (s_line ? 0 : 1)];
    for (char *w = strtok_r(p, " ", &p); w; w = strtok_r(NULL, " ", &p)) {
        char *eq = strchr(w, '=');
        *bad = w;
        if (!eq || strlen(eq + 1) >= SPEC_WORD_MAX)
            return -EINVAL;
        *eq = 0;
        if (!s_line) {
            if (v_value(w, eq + 1, var, &seen) < 0)
                return -EINVAL;
            continue;
        }
        int k = name_index(w, s_keys, K_KEYS);
        if (k < 0 || (seen >> k & 1) || ((k == K_SIP || k == K_DIP) && !(seen >> K_IP & 1)) ||
            s_value(k, eq + 1, s, id) < 0)
            return -EINVAL;
        seen |= 1u << k;
    }
    *bad = "a key missing";
    return seen == (s_line ? (1u << K_KEYS) - 1 : 31u) ? 0 : -EINVAL;
}

/* One line (NUL-terminated, no newline) into the streams so far. */
static int spec_line(char *l, struct stream_spec *out, unsigned *n, const char **bad)
{
    bool s_line = l[0] == 's' && l[1] == ' ';
    if (!s_line && !(l[0] == 'v' && l[1] == ' ')) {
        *bad = "a line is s ... or v ...";
        return -EINVAL;
    }
    if (s_line && *n == STREAMS_MAX) {
        *bad = "more than 16 streams";
        return -EINVAL;
    }
    if (!s_line && !*n) {
        *bad = "a var before any stream";
        return -EINVAL;
    }
    struct stream_spec *s = &out[s_line ? *n : *n - 1];
    if (!s_line && s->nvars == STREAM_VARS_MAX) {
        *bad = "more than 4 vars";
        return -EINVAL;
    }
    if (s_line)
        memset(s, 0, sizeof(*s));
    else
        s->nvars++;
    if (line_words(l + 2, s_line, s, *n, bad) < 0)
        return -EINVAL;
    *bad = s_line ? s_whole(s) : v_whole(s, &s->var[s->nvars - 1]);
    if (*bad)
        return -EINVAL;
    *n += s_line;
    return 0;
}

int stream_spec_parse(const char *text, struct stream_spec *out, unsigned *n, char *why,
                      size_t whylen)
{
    static char buf[STREAM_TEXT_MAX];
    size_t len = strlen(text);
    *n = 0;
    if (len >= sizeof(buf) || strncmp(text, SPEC_MAGIC "\n", sizeof(SPEC_MAGIC)) != 0) {
        snprintf(why, whylen, "streams: not \"%s\" text of at most %d bytes", SPEC_MAGIC,
                 STREAM_TEXT_MAX - 1);
        return -EINVAL;
    }
    memcpy(buf, text, len + 1);
    unsigned line = 1;
    for (char *p = buf + sizeof(SPEC_MAGIC), *nl; *p; p = nl + 1) {
        const char *bad = NULL;
        line++;
        nl = strchr(p, '\n');
        if (!nl) {
            snprintf(why, whylen, "streams: line %u: no newline at its end", line);
            return -EINVAL;
        }
        *nl = 0;
        if (spec_line(p, out, n, &bad) < 0) {
            snprintf(why, whylen, "streams: line %u: %.40s", line, bad);
            return -EINVAL;
        }
    }
    if (*n == 0) {
        snprintf(why, whylen, "streams: no stream");
        return -EINVAL;
    }
    return 0;
}

void stream_spec_one(const struct imix *m, const struct rate *r, struct stream_spec *s)
{
    memset(s, 0, sizeof(*s));
    s->ip = 4;
    s->proto = SPROTO_UDP;
    s->ttl = 64;
    s->sizes = *m;
    s->rate = *r;
    s->mode = SMODE_CONTINUOUS;
}
