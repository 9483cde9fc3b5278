/* config_parse_uint (every size/count key) against a model in 128-bit
 * arithmetic: the answer and the error must match, so a wrap shows. */
#include <errno.h>

#include "kernel/config.h"
#include "tests/fuzz/fuzz.h"

typedef unsigned __int128 u128;
#define BIG ((u128)1 << 80) /* saturation point: above 2^64, times 2^30 still fits */

static int hexd(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Returns 0, -EINVAL or -ERANGE like the parser; *out when 0. */
static int model(const char *s, uint64_t *out)
{
    u128 v = 0, mul = 1;
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    size_t nd = 0;
    for (; *s; s++, nd++) {
        int d = hexd(*s);
        if (d < 0 || d >= base)
            break;
        v = v * (u128)base + (u128)d;
        if (v > BIG)
            v = BIG;
    }
    if (nd == 0)
        return -EINVAL;
    if (*s && base == 10) {
        static const char *const suf[] = {"k",  "m",  "g",  "K",  "M",  "G",
                                          "ki", "mi", "gi", "Ki", "Mi", "Gi"};
        static const u128 mult[] = {1000,    1000000, 1000000000, 1000,    1000000, 1000000000,
                                    1 << 10, 1 << 20, 1 << 30,    1 << 10, 1 << 20, 1 << 30};
        mul = 0;
        for (size_t i = 0; i < sizeof(suf) / sizeof(suf[0]); i++)
            if (strcmp(s, suf[i]) == 0)
                mul = mult[i];
        if (!mul)
            return -EINVAL;
        s += strlen(s);
    }
    if (*s)
        return -EINVAL;
    if (v * mul > UINT64_MAX)
        return -ERANGE;
    *out = (uint64_t)(v * mul);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n > 256)
        return 0;
    char *s = fuzz_cstr(data, n);
    uint64_t got = 0, want = 0;
    int rc = config_parse_uint(s, &got), mrc = model(s, &want);
    /* A bad digit after an overflow may be either error: only "accepted"
     * versus "refused" and the value must agree. */
    FUZZ_CHECK((rc == 0) == (mrc == 0));
    if (rc == 0)
        FUZZ_CHECK(got == want);
    else
        FUZZ_CHECK(rc == -EINVAL || rc == -ERANGE);
    free(s);
    return 0;
}
