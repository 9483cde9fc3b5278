#include "apps/reneg_sets.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "drivers/virtio/vnet.h"

static const char *const indirect_names[] = {
    [VNET_INDIRECT_AUTO] = "auto", [VNET_INDIRECT_ON] = "on", [VNET_INDIRECT_OFF] = "off"};

static int reneg_indirect(const char *v, size_t n, uint8_t *out)
{
    for (uint8_t i = 0; i < sizeof(indirect_names) / sizeof(indirect_names[0]); i++)
        if (strlen(indirect_names[i]) == n && strncmp(v, indirect_names[i], n) == 0) {
            *out = i;
            return 0;
        }
    return -EINVAL;
}

/* One word of set k into feats (the -NAME words, comma-joined) or s. */
static int reneg_word(const char *w, size_t n, unsigned k, struct reneg_set *s, char *feats,
                      size_t fcap, int *seen_indirect, char *why, size_t whylen)
{
    if (n > 9 && strncmp(w, "indirect:", 9) == 0) {
        if (*seen_indirect) {
            snprintf(why, whylen, "set %u: indirect: given twice", k);
            return -EINVAL;
        }
        *seen_indirect = 1;
        if (reneg_indirect(w + 9, n - 9, &s->indirect) == 0)
            return 0;
        snprintf(why, whylen, "set %u: %.*s: indirect: takes on, off or auto", k, (int)n, w);
        return -EINVAL;
    }
    if (w[0] != '-') {
        snprintf(why, whylen,
                 "set %u: %.*s: a word is -NAME (a feature off), indirect:on|off|auto, or the "
                 "set is all",
                 k, (int)n, w);
        return -EINVAL;
    }
    size_t used = strlen(feats);
    if (used + n + 2 > fcap) {
        snprintf(why, whylen, "set %u: more than %zu characters of feature names", k, fcap - 1);
        return -EINVAL;
    }
    snprintf(feats + used, fcap - used, "%s%.*s", used ? "," : "", (int)n, w);
    return 0;
}

/* Set k (from 1), n bytes at t, into s. */
static int reneg_set_parse(const char *t, size_t n, unsigned k, struct reneg_set *s, char *why,
                           size_t whylen)
{
    memset(s, 0, sizeof(*s));
    if (n == 0) {
        snprintf(why, whylen, "set %u is empty (all: every feature on)", k);
        return -EINVAL;
    }
    if (n >= sizeof(s->text)) {
        snprintf(why, whylen, "set %u is longer than %zu characters", k, sizeof(s->text) - 1);
        return -EINVAL;
    }
    memcpy(s->text, t, n);
    if (strcmp(s->text, "all") == 0)
        return 0;
    char feats[sizeof(s->text)] = "";
    int seen_indirect = 0;
    for (size_t i = 0; i < n;) {
        size_t w = strcspn(t + i, ",/");
        if (w > n - i)
            w = n - i;
        if (w == 0) {
            snprintf(why, whylen, "set %u: an empty word (%s)", k, s->text);
            return -EINVAL;
        }
        if (reneg_word(t + i, w, k, s, feats, sizeof(feats), &seen_indirect, why, whylen) < 0)
            return -EINVAL;
        i += w + 1;
        if (i == n && t[n - 1] == ',') {
            snprintf(why, whylen, "set %u: an empty word (%s)", k, s->text);
            return -EINVAL;
        }
    }
    char r[256] = "";
    if (vnet_features_check(feats, r, sizeof(r)) < 0) {
        snprintf(why, whylen, "set %u: %s: %s", k, feats, r);
        return -EINVAL;
    }
    return vnet_features_parse(feats, &s->features_off);
}

int reneg_sets_parse(const char *val, struct reneg_set *out, unsigned max, char *why, size_t whylen)
{
    if (val[0] == '\0') {
        snprintf(why, whylen,
                 "no sets (e.g. sets=all/-event_idx,-ring_packed/-mrg_rxbuf,indirect:off)");
        return -EINVAL;
    }
    unsigned k = 0;
    for (const char *t = val;; t++) {
        size_t n = strcspn(t, "/");
        if (k == max) {
            snprintf(why, whylen, "more than %u sets", max);
            return -EINVAL;
        }
        if (reneg_set_parse(t, n, k + 1, &out[k], why, whylen) < 0)
            return -EINVAL;
        k++;
        t += n;
        if (*t == '\0')
            return (int)k;
    }
}

int reneg_sets_check(const char *val, char *why, size_t whylen)
{
    struct reneg_set s[RENEG_SETS_MAX];
    if (val[0] == '\0')
        return 0;
    return reneg_sets_parse(val, s, RENEG_SETS_MAX, why, whylen) < 0 ? -EINVAL : 0;
}
