#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/json.h"

static void nested(void **state)
{
    (void)state;
    char b[256];
    struct json j;
    json_init(&j, b, sizeof(b));
    json_obj_begin(&j, NULL);
    json_str(&j, "type", "result");
    json_u64(&j, "packets", 18446744073709551615ull);
    json_i64(&j, "neg", -5);
    json_bool(&j, "ok", true);
    json_null(&j, "none");
    json_arr_begin(&j, "a");
    json_u64(&j, NULL, 1);
    json_obj_begin(&j, NULL);
    json_double(&j, "x", 1.5);
    json_obj_end(&j);
    json_arr_end(&j);
    json_obj_end(&j);
    assert_string_equal(json_finish(&j),
                        "{\"type\":\"result\",\"packets\":18446744073709551615,\"neg\":-5,"
                        "\"ok\":true,\"none\":null,\"a\":[1,{\"x\":1.5}]}");
}

static void escaping(void **state)
{
    (void)state;
    char b[128];
    struct json j;
    json_init(&j, b, sizeof(b));
    json_obj_begin(&j, NULL);
    json_str(&j, "m", "a\"b\\c\nd\x01\xff");
    json_double(&j, "nan", NAN);
    json_double(&j, "inf", INFINITY);
    json_obj_end(&j);
    assert_string_equal(json_finish(&j),
                        "{\"m\":\"a\\\"b\\\\c\\nd\\u0001\\ufffd\",\"nan\":null,\"inf\":null}");
}

/* Issue 13: each byte of UTF-8 text was escaped as \u00XX ("g\u00c3\u00a9n"
 * reads back as "gÃ©n"). Well-formed sequences pass as they are; broken ones
 * (a lone continuation byte, a cut sequence, an overlong, a surrogate,
 * above U+10FFFF) become U+FFFD. */
static void utf8(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"g\xc3\xa9n", "\"g\xc3\xa9n\""},
        {"\xe2\x82\xac \xf0\x9f\x98\x80", "\"\xe2\x82\xac \xf0\x9f\x98\x80\""},
        {"\xa9", "\"\\ufffd\""},
        {"\xc3", "\"\\ufffd\""},
        {"\xe2\x82", "\"\\ufffd\\ufffd\""},
        {"\xc0\xaf", "\"\\ufffd\\ufffd\""},
        {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},
        {"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""},
        {"\x7f", "\"\\u007f\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char b[64];
        struct json j;
        json_init(&j, b, sizeof(b));
        json_str(&j, NULL, cases[i].in);
        assert_string_equal(json_finish(&j), cases[i].out);
    }
}

static void overflow(void **state)
{
    (void)state;
    char b[24];
    memset(b, 'Z', sizeof(b));
    struct json j;
    json_init(&j, b, 16);
    json_obj_begin(&j, NULL);
    json_str(&j, "long", "0123456789abcdef");
    json_obj_end(&j);
    assert_true(j.overflow);
    assert_string_equal(json_finish(&j), "{\"truncated\":true}");
    /* nothing written past cap */
    for (size_t i = 16; i < sizeof(b); i++)
        assert_int_equal(b[i], 'Z');
    assert_true(strlen(b) < 16);
}

static void unbalanced(void **state)
{
    (void)state;
    char b[64];
    struct json j;
    json_init(&j, b, sizeof(b));
    json_obj_begin(&j, NULL);
    assert_string_equal(json_finish(&j), "{\"truncated\":true}");
    json_init(&j, b, sizeof(b));
    json_obj_end(&j);
    assert_true(j.overflow);
}

static void too_deep(void **state)
{
    (void)state;
    char b[256];
    struct json j;
    json_init(&j, b, sizeof(b));
    for (int i = 0; i < JSON_MAX_DEPTH + 2; i++)
        json_arr_begin(&j, NULL);
    assert_true(j.overflow);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nested),   cmocka_unit_test(escaping),   cmocka_unit_test(utf8),
        cmocka_unit_test(overflow), cmocka_unit_test(unbalanced), cmocka_unit_test(too_deep),
    };
    return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
