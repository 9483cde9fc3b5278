#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernel/json.h"

void json_init(struct json *j, char *buf, size_t cap)
{
    memset(j, 0, sizeof(*j));
    j->buf = buf;
    j->cap = cap;
    if (cap)
        buf[0] = '\0';
}

static void put(struct json *j, const char *s, size_t n)
{
    if (j->overflow)
        return;
    /* keep one byte for the terminating NUL */
    if (j->cap == 0 || n > j->cap - 1 - j->len) {
        j->overflow = true;
        return;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void puts_(struct json *j, const char *s)
{
    put(j, s, strlen(s));
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629 s4: no
 * overlongs, no surrogates, nothing above U+10FFFF), 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c < 0xc2 || c > 0xf4)
        return 0;
    if (c == 0xe0)
        lo = 0xa0;
    else if (c == 0xed)
        hi = 0x9f;
    else if (c == 0xf0)
        lo = 0x90;
    else if (c == 0xf4)
        hi = 0x8f;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return n;
}

/* UTF-8 text goes out as is; a byte that is not part of a well-formed
 * sequence becomes U+FFFD, so the line is always valid JSON. */
static void put_string(struct json *j, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    put(j, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        size_t u = c >= 0x80 ? utf8_len((const unsigned char *)s) : 0;
        if (u) {
            put(j, s, u);
            s += u - 1;
        } else if (c >= 0x80) {
            put(j, "\\ufffd", 6);
        } else if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            put(j, e, 2);
        } else if (c == '\n') {
            put(j, "\\n", 2);
        } else if (c == '\t') {
            put(j, "\\t", 2);
        } else if (c < 0x20 || c == 0x7f) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            put(j, e, 6);
        } else {
            put(j, (const char *)&c, 1);
        }
    }
    put(j, "\"", 1);
}

/* Comma and key for the next member or element. */
static void member(struct json *j, const char *key)
{
    if (j->depth > 0) {
        if (j->need_comma[j->depth])
            put(j, ",", 1);
        j->need_comma[j->depth] = true;
    }
    if (key) {
        put_string(j, key);
        put(j, ":", 1);
    }
}

static void open_(struct json *j, const char *key, const char *brace)
{
    member(j, key);
    puts_(j, brace);
    if (j->depth + 1 >= JSON_MAX_DEPTH) {
        j->overflow = true;
        return;
    }
    j->depth++;
    j->need_comma[j->depth] = false;
}

static void close_(struct json *j, const char *brace)
{
    if (j->depth <= 0) {
        j->overflow = true;
        return;
    }
    j->depth--;
    puts_(j, brace);
}

void json_obj_begin(struct json *j, const char *key)
{
    open_(j, key, "{");
}
void json_obj_end(struct json *j)
{
    close_(j, "}");
}
void json_arr_begin(struct json *j, const char *key)
{
    open_(j, key, "[");
}
void json_arr_end(struct json *j)
{
    close_(j, "]");
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
    char b[24];
    member(j, key);
    int n = snprintf(b, sizeof(b), "%llu", (unsigned long long)v);
    put(j, b, (size_t)n);
}

void json_i64(struct json *j, const char *key, int64_t v)
{
    char b[24];
    member(j, key);
    int n = snprintf(b, sizeof(b), "%lld", (long long)v);
    put(j, b, (size_t)n);
}

void json_double(struct json *j, const char *key, double v)
{
    char b[40];
    member(j, key);
    if (!isfinite(v)) {
        puts_(j, "null");
        return;
    }
    int n = snprintf(b, sizeof(b), "%.6g", v);
    put(j, b, (size_t)n);
}

void json_bool(struct json *j, const char *key, bool v)
{
    member(j, key);
    puts_(j, v ? "true" : "false");
}

void json_str(struct json *j, const char *key, const char *s)
{
    member(j, key);
    put_string(j, s ? s : "");
}

void json_null(struct json *j, const char *key)
{
    member(j, key);
    puts_(j, "null");
}

const char *json_finish(struct json *j)
{
    if (j->overflow || j->depth != 0)
        return "{\"truncated\":true}";
    return j->buf;
}
