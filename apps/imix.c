#include "apps/imix.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int parse_uint(const char **pp, uint32_t max, uint32_t *out)
{
    const char *p = *pp;
    uint32_t v = 0;
    if (*p < '0' || *p > '9')
        return -EINVAL;
    for (; *p >= '0' && *p <= '9'; p++) {
        v = v * 10 + (uint32_t)(*p - '0');
        if (v > max)
            return -EINVAL;
    }
    *pp = p;
    *out = v;
    return 0;
}

int imix_parse(const char *s, uint32_t max_frame, struct imix *m, char *why, size_t whylen)
{
    memset(m, 0, sizeof(*m));
    /* Sizes are stored in 16 bits: a larger device limit is no use. */
    if (max_frame > UINT16_MAX)
        max_frame = UINT16_MAX;
    if (strcmp(s, "simple") == 0)
        s = "64:7,594:4,1518:1";
    const char *p = s;
    while (*p) {
        uint32_t size, weight;
        if (m->n == IMIX_MAX_SIZES) {
            snprintf(why, whylen, "imix %s: at most %d sizes", s, IMIX_MAX_SIZES);
            return -EINVAL;
        }
        if (parse_uint(&p, 100000, &size) || *p++ != ':' || parse_uint(&p, 100000, &weight) ||
            (*p != ',' && *p != 0)) {
            snprintf(why, whylen,
                     "imix %s: expected size:weight[,size:weight...], e.g. 64:7,594:4,1518:1", s);
            return -EINVAL;
        }
        if (size < 64 || size > max_frame + IMIX_FCS) {
            snprintf(why, whylen, "imix size %u: must be 64..%u (frame with FCS)", size,
                     max_frame + IMIX_FCS);
            return -EINVAL;
        }
        if (weight == 0) {
            snprintf(why, whylen, "imix %s: weight of size %u is 0", s, size);
            return -EINVAL;
        }
        m->size[m->n] = (uint16_t)(size - IMIX_FCS);
        m->weight[m->n] = (uint16_t)(weight > IMIX_MAX_WEIGHT ? IMIX_MAX_WEIGHT : weight);
        m->cycle += weight;
        if (m->cycle > IMIX_MAX_WEIGHT) {
            snprintf(why, whylen, "imix %s: weights add up to more than %d", s, IMIX_MAX_WEIGHT);
            return -EINVAL;
        }
        m->n++;
        if (*p == ',' && *++p == 0) {
            snprintf(why, whylen, "imix %s: trailing comma", s);
            return -EINVAL;
        }
    }
    if (m->n == 0) {
        snprintf(why, whylen, "imix: empty list");
        return -EINVAL;
    }
    return 0;
}

int imix_check(const char *val, char *why, size_t whylen)
{
    struct imix m;
    if (val[0] == 0)
        return 0;
    return imix_parse(val, 1514, &m, why, whylen);
}

void imix_sequence(const struct imix *m, uint8_t *seq)
{
    int32_t cur[IMIX_MAX_SIZES] = {0};
    for (unsigned k = 0; k < m->cycle; k++) {
        unsigned best = 0;
        for (unsigned i = 0; i < m->n; i++) {
            cur[i] += m->weight[i];
            if (cur[i] > cur[best])
                best = i;
        }
        cur[best] -= (int32_t)m->cycle;
        seq[k] = (uint8_t)best;
    }
}
