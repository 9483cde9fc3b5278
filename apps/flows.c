#include "apps/flows.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *parse_ip(const char *p, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        uint32_t o = 0;
        if (*p < '0' || *p > '9')
            return NULL;
        for (int d = 0; *p >= '0' && *p <= '9'; p++, d++) {
            o = o * 10 + (uint32_t)(*p - '0');
            if (o > 255 || d > 2)
                return NULL;
        }
        v = v << 8 | o;
        if (i < 3 && *p++ != '.')
            return NULL;
    }
    *out = v;
    return p;
}

/* A port, 1..65535: the rule of src_port= and dst_port= (port 0 is no
 * port a UDP peer can answer). */
static const char *parse_port(const char *p, uint32_t *out, const char **reason)
{
    uint32_t v = 0;
    if (*p < '0' || *p > '9')
        return NULL;
    for (; *p >= '0' && *p <= '9'; p++) {
        v = v * 10 + (uint32_t)(*p - '0');
        if (v > 65535)
            break;
    }
    if (v == 0 || v > 65535) {
        *reason = "ports are 1..65535 (as src_port=, dst_port=)";
        return NULL;
    }
    *out = v;
    return p;
}

/* "A" or "A-B" into lo and n. */
static const char *parse_range(const char *p, bool ip, uint32_t *lo, uint32_t *n,
                               const char **reason)
{
    uint32_t a, b;
    p = ip ? parse_ip(p, &a) : parse_port(p, &a, reason);
    if (!p)
        return NULL;
    b = a;
    if (*p == '-') {
        p = ip ? parse_ip(p + 1, &b) : parse_port(p + 1, &b, reason);
        if (!p)
            return NULL;
    }
    if (b < a || (uint64_t)b - a + 1 > FLOWS_MAX) {
        *reason = "a range is ascending, at most 1024 values";
        return NULL;
    }
    *lo = a;
    *n = b - a + 1;
    return p;
}

/* The fields of flows=, each given at most once: a repeat would win
 * silently over the first, and seq,random contradict each other. */
enum { FLOWS_SIP, FLOWS_DIP, FLOWS_SPORT, FLOWS_DPORT, FLOWS_MODE, FLOWS_FIELDS };
static const char *const flows_field[] = {"sip", "dip", "sport", "dport", "seq|random"};
_Static_assert(sizeof(flows_field) / sizeof(flows_field[0]) == FLOWS_FIELDS, "a name per field");

/* One comma-separated item at p: its field in *field and the end of it,
 * or NULL (with *reason when there is more to say than the syntax). */
static const char *parse_item(const char *p, struct flows_spec *fs, int *field, const char **reason)
{
    if (strncmp(p, "sip:", 4) == 0) {
        *field = FLOWS_SIP;
        return parse_range(p + 4, true, &fs->sip_lo, &fs->sip_n, reason);
    }
    if (strncmp(p, "dip:", 4) == 0) {
        *field = FLOWS_DIP;
        return parse_range(p + 4, true, &fs->dip_lo, &fs->dip_n, reason);
    }
    if (strncmp(p, "sport:", 6) == 0) {
        *field = FLOWS_SPORT;
        return parse_range(p + 6, false, &fs->sport_lo, &fs->sport_n, reason);
    }
    if (strncmp(p, "dport:", 6) == 0) {
        *field = FLOWS_DPORT;
        return parse_range(p + 6, false, &fs->dport_lo, &fs->dport_n, reason);
    }
    *field = FLOWS_MODE;
    fs->random = strncmp(p, "random", 6) == 0;
    if (fs->random)
        return p + 6;
    return strncmp(p, "seq", 3) == 0 ? p + 3 : NULL;
}

#define FLOWS_SYNTAX "expected sip:A[-B],dip:A[-B],sport:P[-Q],dport:P[-Q],seq|random"

int flows_parse(const char *s, struct flows_spec *fs, char *why, size_t whylen)
{
    unsigned seen = 0;
    memset(fs, 0, sizeof(*fs));
    for (const char *p = s; *p;) {
        const char *reason = NULL;
        char twice[32];
        int field;
        const char *q = parse_item(p, fs, &field, &reason);
        size_t n = strcspn(p, ",");
        if (q && *q != ',' && *q != 0) {
            q = NULL;
        } else if (q && (seen >> field & 1)) {
            snprintf(twice, sizeof(twice), "%s given twice", flows_field[field]);
            reason = twice;
        } else if (q && *q == ',' && q[1] == 0) {
            reason = "a comma ends the list";
        }
        if (!q || reason) {
            snprintf(why, whylen, "'%.*s': %s", (int)(n < 32 ? n : 32), p,
                     reason ? reason : FLOWS_SYNTAX);
            return -EINVAL;
        }
        seen |= 1u << field;
        p = *q == ',' ? q + 1 : q;
    }
    uint64_t total = (uint64_t)(fs->sip_n ? fs->sip_n : 1) * (fs->dip_n ? fs->dip_n : 1) *
                     (fs->sport_n ? fs->sport_n : 1) * (fs->dport_n ? fs->dport_n : 1);
    if (total > FLOWS_MAX) {
        snprintf(why, whylen, "%llu combinations, at most %d", (unsigned long long)total,
                 FLOWS_MAX);
        return -EINVAL;
    }
    return 0;
}

int flows_check(const char *val, char *why, size_t whylen)
{
    struct flows_spec fs;
    return flows_parse(val, &fs, why, whylen);
}

unsigned flows_expand(const struct flows_spec *fs, const struct pkt_flow *base,
                      struct pkt_flow *out)
{
    uint32_t sip_n = fs->sip_n ? fs->sip_n : 1, dip_n = fs->dip_n ? fs->dip_n : 1;
    uint32_t sp_n = fs->sport_n ? fs->sport_n : 1, dp_n = fs->dport_n ? fs->dport_n : 1;
    unsigned k = 0;
    for (uint32_t d = 0; d < dip_n; d++)
        for (uint32_t s = 0; s < sip_n; s++)
            for (uint32_t dp = 0; dp < dp_n; dp++)
                for (uint32_t sp = 0; sp < sp_n; sp++) {
                    struct pkt_flow *f = &out[k];
                    f->saddr = fs->sip_n ? fs->sip_lo + s : base->saddr;
                    f->daddr = fs->dip_n ? fs->dip_lo + d : base->daddr;
                    f->sport = (uint16_t)(fs->sport_n ? fs->sport_lo + sp : base->sport);
                    f->dport = (uint16_t)(fs->dport_n ? fs->dport_lo + dp : base->dport);
                    f->stream = (uint16_t)k;
                    k++;
                }
    return k;
}
