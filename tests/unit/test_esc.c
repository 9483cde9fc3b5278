/* kernel/esc.c: text from outside echoed on the console. Issue 31 F11: a
 * newline in the fw_cfg config was echoed raw and forged a machine line
 * (@vnperf {"type":"exit",...}) ahead of the real one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/esc.h"

static void expect_esc(const char *src, size_t n, const char *want)
{
    char out[256];
    memset(out, 'x', sizeof(out));
    size_t len = esc_text(out, sizeof(out), src, n);
    assert_string_equal(out, want);
    assert_int_equal(len, strlen(want));
}

static void plain_text_as_is(void **st)
{
    (void)st;
    expect_esc("app=gen rate=10k", 16, "app=gen rate=10k");
    expect_esc("", 0, "");
    expect_esc("~ !\"#{}", 7, "~ !\"#{}");
}

static void nothing_starts_a_line(void **st)
{
    (void)st;
    static const char forged[] = "app=selftest\n@vnperf {\"type\":\"exit\",\"code\":0}\r\n";
    expect_esc(forged, sizeof(forged) - 1,
               "app=selftest\\n@vnperf {\"type\":\"exit\",\"code\":0}\\r\\n");
    static const char ctl[] = "a\tb\x0b"
                              "c\x0c"
                              "d\x1b[2J\x7f";
    expect_esc(ctl, sizeof(ctl) - 1, "a\\tb\\x0bc\\x0cd\\x1b[2J\\x7f");
    /* U+0085 (NEL) and U+2028 split lines for some readers; no byte above
     * 0x7e goes out raw. */
    expect_esc("\xc2\x85\xe2\x80\xa8\xff", 6, "\\xc2\\x85\\xe2\\x80\\xa8\\xff");
    /* The escape character itself, so an echo reads back one way. */
    expect_esc("a\\nb", 4, "a\\\\nb");
    /* A NUL inside is shown, not taken as the end. */
    expect_esc("a\0b", 3, "a\\x00b");
}

static void whole_escapes_within_cap(void **st)
{
    (void)st;
    char out[8];
    /* "ab\x01" needs 2 + 4 + 1: the escape that does not fit is left out
     * whole, never cut into a "\x" a reader could misread. */
    memset(out, 'x', sizeof(out));
    assert_int_equal(esc_text(out, 6,
                              "ab\x01"
                              "cd",
                              5),
                     2);
    assert_string_equal(out, "ab");
    assert_int_equal(out[3], 'x');
    assert_int_equal(esc_text(out, 7,
                              "ab\x01"
                              "cd",
                              5),
                     6);
    assert_string_equal(out, "ab\\x01");
    assert_int_equal(esc_text(out, 1, "abc", 3), 0);
    assert_string_equal(out, "");
    assert_int_equal(esc_text(out, 0, "abc", 3), 0);
    assert_int_equal(out[0], '\0');
    assert_int_equal(ESC_CAP(10), 41);
}

/* Reads an escape back: the bytes it stands for, or -1 if it is not one
 * esc_text writes. */
static int unesc(const char *s, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\') {
            out[k++] = s[i];
            continue;
        }
        if (i + 1 >= n)
            return -1;
        char c = s[++i];
        if (c == 'n' || c == 'r' || c == 't' || c == '\\') {
            out[k++] = c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : '\\';
        } else if (c == 'x' && i + 2 < n) {
            unsigned v;
            if (sscanf(s + i + 1, "%2x", &v) != 1)
                return -1;
            out[k++] = (char)v;
            i += 2;
        } else {
            return -1;
        }
    }
    return (int)k;
}

/* 10^5 random byte strings: the output is printable ASCII only (no byte
 * can end the line) and reads back to the input, cut at a whole escape. */
static void round_trip(void **st)
{
    (void)st;
    uint64_t rng = 31;
    char src[64], out[ESC_CAP(64)], back[64];
    for (int iter = 0; iter < 100000; iter++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        size_t n = (size_t)(rng >> 58), cap = 1 + (size_t)(rng >> 32) % sizeof(out);
        for (size_t i = 0; i < n; i++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            src[i] = (char)(rng >> 56);
        }
        size_t len = esc_text(out, cap, src, n);
        assert_true(len < cap && out[len] == '\0' && strlen(out) == len);
        for (size_t i = 0; i < len; i++)
            assert_true(out[i] >= 0x20 && out[i] <= 0x7e);
        int k = unesc(out, len, back);
        assert_true(k >= 0 && (size_t)k <= n);
        assert_memory_equal(back, src, (size_t)k);
        if (cap == sizeof(out))
            assert_int_equal(k, n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_text_as_is),
        cmocka_unit_test(nothing_starts_a_line),
        cmocka_unit_test(whole_escapes_within_cap),
        cmocka_unit_test(round_trip),
    };
    return cmocka_run_group_tests_name("esc", tests, NULL, NULL);
}
