#include "kernel/esc.h"

/* The escape of c into e (no NUL): its length, 1 when c goes out as is. */
static size_t esc_char(unsigned char c, char e[4])
{
    static const char hex[] = "0123456789abcdef";
    const char *named = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
    if (c == '\\')
        named = "\\\\";
    if (named) {
        e[0] = named[0];
        e[1] = named[1];
        return 2;
    }
    if (c >= 0x20 && c <= 0x7e) {
        e[0] = (char)c;
        return 1;
    }
    e[0] = '\\';
    e[1] = 'x';
    e[2] = hex[c >> 4];
    e[3] = hex[c & 15];
    return 4;
}

size_t esc_text(char *dst, size_t cap, const char *src, size_t n)
{
    size_t len = 0;
    if (cap == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char e[4];
        size_t k = esc_char((unsigned char)src[i], e);
        if (k > cap - 1 - len)
            break;
        for (size_t j = 0; j < k; j++)
            dst[len++] = e[j];
    }
    dst[len] = '\0';
    return len;
}
