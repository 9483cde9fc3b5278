/* kernel/json.c: any string value gives a valid JSON string (RFC 8259 s7)
 * of valid UTF-8, and well-formed UTF-8 passes unchanged. */
#include "kernel/json.h"
#include "tests/fuzz/fuzz.h"

/* Length of the well-formed UTF-8 sequence at p (RFC 3629 s4), 0 if none:
 * written from the RFC's table, apart from the code under test. */
static size_t utf8_seq(const unsigned char *p, size_t left)
{
    static const struct {
        unsigned char lo0, hi0, lo1, hi1;
        size_t n;
    } row[] = {
        {0xc2, 0xdf, 0x80, 0xbf, 2}, {0xe0, 0xe0, 0xa0, 0xbf, 3}, {0xe1, 0xec, 0x80, 0xbf, 3},
        {0xed, 0xed, 0x80, 0x9f, 3}, {0xee, 0xef, 0x80, 0xbf, 3}, {0xf0, 0xf0, 0x90, 0xbf, 4},
        {0xf1, 0xf3, 0x80, 0xbf, 4}, {0xf4, 0xf4, 0x80, 0x8f, 4},
    };
    for (size_t r = 0; r < sizeof(row) / sizeof(row[0]); r++) {
        if (p[0] < row[r].lo0 || p[0] > row[r].hi0)
            continue;
        if (left < row[r].n || p[1] < row[r].lo1 || p[1] > row[r].hi1)
            return 0;
        for (size_t i = 2; i < row[r].n; i++)
            if (p[i] < 0x80 || p[i] > 0xbf)
                return 0;
        return row[r].n;
    }
    return 0;
}

/* The output is "..." with escapes or valid UTF-8 inside; returns the
 * number of input bytes it stands for unchanged (no U+FFFD). */
static void check_string(const char *s, size_t len, const char *in)
{
    const unsigned char *p = (const unsigned char *)s;
    FUZZ_CHECK(len >= 2 && p[0] == '"' && p[len - 1] == '"');
    size_t i = 1, k = 0;
    while (i < len - 1) {
        if (p[i] == '\\') {
            FUZZ_CHECK(strchr("\"\\/bfnrtu", p[i + 1]) != NULL);
            i += p[i + 1] == 'u' ? 6 : 2;
            k++;
            continue;
        }
        FUZZ_CHECK(p[i] >= 0x20 && p[i] != '"' && p[i] != 0x7f);
        size_t u = p[i] < 0x80 ? 1 : utf8_seq(p + i, len - 1 - i);
        FUZZ_CHECK(u > 0);
        /* Raw bytes are the input's own, in place. */
        FUZZ_CHECK(memcmp(p + i, in + k, u) == 0);
        i += u;
        k += u;
    }
    FUZZ_CHECK(i == len - 1 && k == strlen(in));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n > 1024)
        return 0;
    char *in = fuzz_cstr(data, n);
    static char buf[8 * 1024];
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_str(&j, NULL, in);
    const char *out = json_finish(&j);
    FUZZ_CHECK(!j.overflow);
    check_string(out, strlen(out), in);
    free(in);
    return 0;
}
