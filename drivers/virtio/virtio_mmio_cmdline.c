/* virtio_mmio.device= words (see virtio_mmio_cmdline.h). Numbers follow
 * Linux's memparse and sscanf("%lli"): 0x hex, leading 0 octal, else
 * decimal; every step is checked for overflow. */
#include "drivers/virtio/virtio_mmio_cmdline.h"

#include <errno.h>
#include <string.h>

struct cur {
    const char *p, *end;
};

static int digit(char c, unsigned radix)
{
    unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                 : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                 : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                        : 16;
    return d < radix ? (int)d : -1;
}

/* An unsigned number at c->p, at least one digit. */
static int num(struct cur *c, uint64_t *v)
{
    unsigned radix = 10;
    if (c->end - c->p >= 3 && c->p[0] == '0' && (c->p[1] | 0x20) == 'x' &&
        digit(c->p[2], 16) >= 0) {
        radix = 16;
        c->p += 2;
    } else if (c->end - c->p >= 2 && c->p[0] == '0') {
        radix = 8;
    }
    if (c->p == c->end || digit(*c->p, radix) < 0)
        return -EINVAL;
    *v = 0;
    for (int d; c->p < c->end && (d = digit(*c->p, radix)) >= 0; c->p++) {
        if (*v > (UINT64_MAX - (unsigned)d) / radix)
            return -EINVAL;
        *v = *v * radix + (unsigned)d;
    }
    return 0;
}

/* memparse's suffixes: K, M, G (binary). */
static int size_suffix(struct cur *c, uint64_t *v)
{
    static const char sfx[] = "kmg";
    if (c->p == c->end)
        return 0;
    const char *s = memchr(sfx, *c->p | 0x20, 3);
    if (!s)
        return 0;
    unsigned shift = 10 * (unsigned)(s - sfx + 1);
    if (*v > UINT64_MAX >> shift)
        return -EINVAL;
    *v <<= shift;
    c->p++;
    return 0;
}

static int expect(struct cur *c, char ch)
{
    if (c->p == c->end || *c->p != ch)
        return -EINVAL;
    c->p++;
    return 0;
}

int vm_word_parse(const char *w, size_t wlen, struct vm_word *out)
{
    const size_t klen = sizeof(VM_CMDLINE_KEY) - 1;
    if (wlen < klen || memcmp(w, VM_CMDLINE_KEY, klen))
        return -EINVAL;
    struct cur c = {w + klen, w + wlen};
    uint64_t size, base, irq, id;
    if (num(&c, &size) || size_suffix(&c, &size) || !size || expect(&c, '@') || num(&c, &base) ||
        expect(&c, ':') || num(&c, &irq) || irq > UINT32_MAX)
        return -EINVAL;
    if (c.p != c.end && (expect(&c, ':') || num(&c, &id) || c.p != c.end))
        return -EINVAL;
    if (base > UINT64_MAX - (size - 1))
        return -EINVAL; /* the window's last byte wraps */
    *out = (struct vm_word){.base = base, .size = size, .gsi = (uint32_t)irq};
    return 0;
}

int vm_cmdline_next(const char *line, size_t len, size_t *pos, const char **w, size_t *wlen)
{
    const size_t klen = sizeof(VM_CMDLINE_KEY) - 1;
    size_t i = *pos;
    while (i < len) {
        while (i < len && line[i] == ' ')
            i++;
        size_t s = i;
        while (i < len && line[i] != ' ')
            i++;
        if (i - s > klen && memcmp(line + s, VM_CMDLINE_KEY, klen) == 0) {
            *pos = i;
            *w = line + s;
            *wlen = i - s;
            return 1;
        }
    }
    *pos = len;
    return 0;
}
