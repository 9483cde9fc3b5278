/* Config line parser. Every word is key=value, looked up in the caller's
 * key table; a bad word stops the run with one line naming the key, the
 * value and what is allowed. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kernel/config.h"

/* Words the platform adds to the command line: QEMU -M microvm appends
 * virtio_mmio.device=... for each MMIO device (read by the driver). */
static const char *const transport_keys[] = {"virtio_mmio.device"};

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

int config_key_index(const struct cfg_table *t, const char *name)
{
    for (size_t i = 0; i < t->nkeys; i++)
        if (strcmp(t->keys[i].name, name) == 0)
            return (int)i;
    return -1;
}

static bool given_bit(const struct cfg_given *given, size_t i)
{
    return (given->bits[i / 64] >> (i % 64)) & 1;
}

bool config_given(const struct cfg_table *t, const struct cfg_given *given, const char *key)
{
    int i = config_key_index(t, key);
    return i >= 0 && given_bit(given, (size_t)i);
}

int config_parse_uint(const char *s, uint64_t *out)
{
    uint64_t v = 0, mul = 1;
    int base = 10;
    const char *p = s;

    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    }
    /* At least one digit: "k" alone read as 0. */
    if (!(*p >= '0' && *p <= '9') && !(base == 16 && isxdigit((unsigned char)*p)))
        return -EINVAL;
    for (; *p; p++) {
        int d;
        if (*p >= '0' && *p <= '9')
            d = *p - '0';
        else if (base == 16 && *p >= 'a' && *p <= 'f')
            d = *p - 'a' + 10;
        else if (base == 16 && *p >= 'A' && *p <= 'F')
            d = *p - 'A' + 10;
        else
            break;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return -ERANGE;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    if (*p && base == 10) {
        /* k/m/g are decimal (counts, rates); ki/mi/gi binary (sizes) */
        char u = (char)(*p | 0x20);
        mul = u == 'k' ? 1000ull : u == 'm' ? 1000000ull : u == 'g' ? 1000000000ull : 0;
        if (!mul)
            return -EINVAL;
        p++;
        if (*p == 'i') {
            mul = u == 'k' ? 1ull << 10 : u == 'm' ? 1ull << 20 : 1ull << 30;
            p++;
        }
    }
    if (*p)
        return -EINVAL;
    if (v && mul > UINT64_MAX / v)
        return -ERANGE;
    *out = v * mul;
    return 0;
}

static int parse_bool(const char *s, bool *out)
{
    static const char *const t[] = {"1", "on", "yes", "true"};
    static const char *const f[] = {"0", "off", "no", "false"};
    for (int i = 0; i < 4; i++) {
        if (strcmp(s, t[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcmp(s, f[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    return -EINVAL;
}

static int parse_enum(const char *s, const char *choices, unsigned *idx)
{
    size_t n = strlen(s);
    unsigned i = 0;
    for (const char *p = choices; *p; i++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, s, n) == 0) {
            *idx = i;
            return 0;
        }
        if (!bar)
            break;
        p = bar + 1;
    }
    return -EINVAL;
}

const char *config_enum_name(const struct cfg_table *t, const char *key, unsigned idx)
{
    static char buf[32];
    int k = config_key_index(t, key);
    if (k < 0 || t->keys[k].type != CFG_ENUM)
        return "?";
    const char *p = t->keys[k].choices;
    for (unsigned i = 0; i < idx && p; i++) {
        p = strchr(p, '|');
        if (p)
            p++;
    }
    if (!p)
        return "?";
    size_t len = strcspn(p, "|");
    if (len >= sizeof(buf))
        len = sizeof(buf) - 1;
    memcpy(buf, p, len);
    buf[len] = '\0';
    return buf;
}

static int parse_ip4(const char *s, uint32_t *out)
{
    uint8_t b[4];
    const char *p = s;
    for (int i = 0; i < 4; i++) {
        unsigned v = 0, digits = 0;
        while (*p >= '0' && *p <= '9' && digits < 4) {
            v = v * 10 + (unsigned)(*p++ - '0');
            digits++;
        }
        if (!digits || digits > 3 || v > 255)
            return -EINVAL;
        b[i] = (uint8_t)v;
        if (i < 3 && *p++ != '.')
            return -EINVAL;
    }
    if (*p)
        return -EINVAL;
    memcpy(out, b, 4); /* network byte order */
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)(c | 0x20);
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

static int parse_mac(const char *s, uint8_t out[6])
{
    for (int i = 0; i < 6; i++) {
        int hi = hexval(s[0]), lo = hi < 0 ? -1 : hexval(s[1]);
        if (hi < 0 || lo < 0)
            return -EINVAL;
        out[i] = (uint8_t)(hi << 4 | lo);
        s += 2;
        if (i < 5 && *s++ != ':')
            return -EINVAL;
    }
    return *s ? -EINVAL : 0;
}

/* RFC 4291 s2.2 forms 1 and 2 (the dotted IPv4 tail, form 3, is not
 * taken). */
int config_parse_ip6(const char *s, uint8_t out[16])
{
    uint16_t g[8];
    int n = 0, gap = -1;
    const char *p = s;
    if (p[0] == ':' && p[1] == ':') {
        gap = 0;
        p += 2;
    }
    while (*p) {
        unsigned v = 0, digits = 0;
        int d;
        while ((d = hexval(*p)) >= 0 && digits < 5) {
            v = v << 4 | (unsigned)d;
            digits++;
            p++;
        }
        if (!digits || digits > 4 || n == 8)
            return -EINVAL;
        g[n++] = (uint16_t)v;
        if (!*p)
            break;
        if (*p++ != ':' || !*p)
            return -EINVAL;
        if (*p == ':') {
            if (gap >= 0)
                return -EINVAL; /* "::" at most once */
            gap = n;
            p++;
        }
    }
    if (gap < 0 ? n != 8 : n > 7)
        return -EINVAL;
    memset(out, 0, 16);
    int tail = gap < 0 ? 0 : n - gap; /* groups after the "::" */
    for (int i = 0; i < n; i++) {
        int at = i < n - tail ? i : 8 - (n - i);
        out[2 * at] = (uint8_t)(g[i] >> 8);
        out[2 * at + 1] = (uint8_t)g[i];
    }
    return 0;
}

/* CFG_UINT: a number within the key's range, stored at its field's size. */
static int set_uint(void *dst, const struct cfg_key *k, const char *val, char *err, size_t errlen)
{
    uint64_t v;
    int rc = config_parse_uint(val, &v);
    if (rc == -ERANGE || (rc == 0 && (v < k->min || v > k->max)))
        return fail(err, errlen, "config: %s=%s is out of range (allowed %llu..%llu)", k->name, val,
                    (unsigned long long)k->min, (unsigned long long)k->max);
    if (rc < 0)
        return fail(err, errlen,
                    "config: %s=%s is not a number (allowed %llu..%llu, e.g. 64, 0x40, 10k)",
                    k->name, val, (unsigned long long)k->min, (unsigned long long)k->max);
    switch (k->size) {
    case 1:
        *(uint8_t *)dst = (uint8_t)v;
        break;
    case 2:
        *(uint16_t *)dst = (uint16_t)v;
        break;
    case 4:
        *(uint32_t *)dst = (uint32_t)v;
        break;
    default:
        *(uint64_t *)dst = v;
        break;
    }
    return 0;
}

/* The value by the key's type into dst; a string is only measured here
 * (copied once its check passed). */
static int set_value(void *dst, const struct cfg_key *k, const char *val, char *err, size_t errlen)
{
    bool b;
    unsigned idx;
    switch (k->type) {
    case CFG_UINT:
        return set_uint(dst, k, val, err, errlen);
    case CFG_BOOL:
        if (parse_bool(val, &b) < 0)
            return fail(err, errlen, "config: %s=%s is not a boolean (allowed 0|1|on|off|yes|no)",
                        k->name, val);
        *(uint8_t *)dst = b;
        break;
    case CFG_ENUM:
        if (parse_enum(val, k->choices, &idx) < 0)
            return fail(err, errlen, "config: %s=%s is not allowed (allowed %s)", k->name, val,
                        k->choices);
        *(uint8_t *)dst = (uint8_t)idx;
        break;
    case CFG_IP4:
        if (parse_ip4(val, (uint32_t *)dst) < 0)
            return fail(err, errlen, "config: %s=%s is not an IPv4 address (e.g. 10.0.0.2)",
                        k->name, val);
        break;
    case CFG_IP6:
        if (config_parse_ip6(val, (uint8_t *)dst) < 0)
            return fail(err, errlen, "config: %s=%s is not an IPv6 address (e.g. fd00::2)", k->name,
                        val);
        break;
    case CFG_MAC:
        if (parse_mac(val, (uint8_t *)dst) < 0)
            return fail(err, errlen, "config: %s=%s is not a MAC address (e.g. 52:54:00:12:34:56)",
                        k->name, val);
        break;
    case CFG_STR:
        /* The field's own size: app= is shorter than the rest. */
        if (strlen(val) >= k->size)
            return fail(err, errlen, "config: %s= is too long (%zu characters, at most %zu)",
                        k->name, strlen(val), k->size - 1);
        break;
    }
    return 0;
}

static int set_key(void *obj, const struct cfg_key *k, const char *val, char *err, size_t errlen)
{
    void *dst = (char *)obj + k->offset;
    char why[160] = "";

    if (set_value(dst, k, val, err, errlen) < 0)
        return -EINVAL;
    if (k->check && k->check(val, why, sizeof(why)) < 0)
        return fail(err, errlen, "config: %s=%s: %s", k->name, val, why);
    if (k->type == CFG_STR)
        strcpy((char *)dst, val);
    return 0;
}

static int is_transport_key(const char *key, size_t n)
{
    for (size_t i = 0; i < sizeof(transport_keys) / sizeof(transport_keys[0]); i++)
        if (strlen(transport_keys[i]) == n && strncmp(transport_keys[i], key, n) == 0)
            return 1;
    return 0;
}

/* Zero, then every default: a default that does not parse, or a field
 * outside obj, is a bug in the table, said as such. */
static int set_defaults(const struct cfg_table *t, void *obj, size_t objsize, char *err,
                        size_t errlen)
{
    memset(obj, 0, objsize);
    if (t->nkeys > CFG_KEYS_MAX)
        return fail(err, errlen, "config: %zu keys in the table (at most %d)", t->nkeys,
                    CFG_KEYS_MAX);
    for (size_t i = 0; i < t->nkeys; i++) {
        const struct cfg_key *k = &t->keys[i];
        if (k->offset > objsize || k->size > objsize - k->offset)
            return fail(err, errlen, "config: key %s lies outside its struct", k->name);
        if (k->def && set_key(obj, k, k->def, err, errlen) < 0)
            return -EINVAL;
    }
    return 0;
}

int config_parse(const struct cfg_table *t, void *obj, size_t objsize, struct cfg_given *given,
                 const char *line, char *err, size_t errlen)
{
    char word[CFG_LONG_MAX + 64];
    _Static_assert(CFG_LONG_MAX >= CFG_STR_MAX, "a word holds the longest value");

    if (set_defaults(t, obj, objsize, err, errlen) < 0)
        return -EINVAL;
    memset(given, 0, sizeof(*given));

    const char *p = line ? line : "";
    for (;;) {
        p += strspn(p, " \t\r\n");
        if (!*p)
            break;
        size_t n = strcspn(p, " \t\r\n");
        if (n >= sizeof(word))
            return fail(err, errlen, "config: word '%.40s...' is too long (at most %zu characters)",
                        p, sizeof(word) - 1);
        memcpy(word, p, n);
        word[n] = '\0';
        p += n;

        char *eq = strchr(word, '=');
        if (!eq || eq == word)
            return fail(err, errlen, "config: '%s' is not a key=value word", word);
        *eq = '\0';
        const char *val = eq + 1;
        if (is_transport_key(word, strlen(word)))
            continue;
        int ki = config_key_index(t, word);
        if (ki < 0)
            return fail(err, errlen, "config: unknown key '%s' (see docs/config.md)", word);
        if (given_bit(given, (size_t)ki))
            return fail(err, errlen, "config: key '%s' given twice", word);
        if (!*val)
            return fail(err, errlen, "config: %s= has no value", word);
        if (set_key(obj, &t->keys[ki], val, err, errlen) < 0)
            return -EINVAL;
        given->bits[ki / 64] |= 1ull << (ki % 64);
    }
    return 0;
}

int config_parse_text(const struct cfg_table *t, void *obj, size_t objsize, struct cfg_given *given,
                      const char *text, size_t len, char *err, size_t errlen)
{
    const char *nul = memchr(text, '\0', len);
    if (nul)
        return fail(err, errlen, "config: a NUL byte at offset %zu (the config is text: %s)",
                    (size_t)(nul - text), "key=value words");
    return config_parse(t, obj, objsize, given, text, err, errlen);
}
