/* Load options -> config line. The shell hands over "NAME.EFI key=v ...",
 * a boot entry hands over whatever its optional data holds; only plain
 * printable text is taken as a command line. */
#include "boot/efi/efi_cmdline.h"

#include <errno.h>
#include <string.h>

static char lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* Last path component of s[0..n) without a ".efi" suffix. */
static void base_name(const char *s, size_t n, size_t *start, size_t *len)
{
    size_t b = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\\' || s[i] == '/' || s[i] == ':')
            b = i + 1;
    size_t l = n - b;
    if (l >= 4 && s[b + l - 4] == '.' && lower(s[b + l - 3]) == 'e' && lower(s[b + l - 2]) == 'f' &&
        lower(s[b + l - 1]) == 'i')
        l -= 4;
    *start = b;
    *len = l;
}

static int names_image(const char *word, size_t n, const uint16_t *image_path)
{
    char path[256];
    size_t pn = 0;
    if (!image_path)
        return 0;
    for (; image_path[pn] && pn < sizeof(path); pn++) {
        if (image_path[pn] > 0x7e)
            return 0;
        path[pn] = (char)image_path[pn];
    }
    if (pn == sizeof(path))
        return 0;
    size_t ws, wl, ps, pl;
    base_name(word, n, &ws, &wl);
    base_name(path, pn, &ps, &pl);
    if (wl == 0 || wl != pl)
        return 0;
    for (size_t i = 0; i < wl; i++)
        if (lower(word[ws + i]) != lower(path[ps + i]))
            return 0;
    return 1;
}

int efi_cmdline_convert(const void *opts, size_t bytes, const uint16_t *image_path, char *out,
                        size_t outlen)
{
    const unsigned char *p = opts;
    size_t n = 0;

    if (outlen == 0)
        return -E2BIG;
    out[0] = '\0';
    if (bytes % 2)
        return -EINVAL;
    for (size_t i = 0; i < bytes / 2; i++) {
        uint16_t c;
        memcpy(&c, p + 2 * i, sizeof(c));
        if (c == 0)
            break;
        if (c == '\t')
            c = ' ';
        if (c < 0x20 || c > 0x7e) {
            out[0] = '\0';
            return -EINVAL;
        }
        if (n + 1 >= outlen) {
            out[0] = '\0';
            return -E2BIG;
        }
        out[n++] = (char)c;
    }
    out[n] = '\0';

    size_t s = 0;
    while (s < n && out[s] == ' ')
        s++;
    size_t w = s;
    while (w < n && out[w] != ' ')
        w++;
    if (names_image(out + s, w - s, image_path))
        s = w;
    while (s < n && out[s] == ' ')
        s++;
    while (n > s && out[n - 1] == ' ')
        n--;
    /* memmove by hand: GNU-EFI's libefi has none. */
    for (size_t i = s; i < n; i++)
        out[i - s] = out[i];
    out[n - s] = '\0';
    return 0;
}
