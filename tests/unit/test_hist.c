/* apps/hist.c: bucket boundaries and quantiles against exact sorted data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "apps/hist_json.h"

static void test_buckets_cover_values(void **st)
{
    (void)st;
    /* Buckets tile the value range with no gap or overlap. */
    for (unsigned i = 0; i + 1 < HIST_BUCKETS; i++) {
        assert_true(hist_bucket_low(i) <= hist_bucket_high(i));
        assert_int_equal(hist_bucket_high(i) + 1, hist_bucket_low(i + 1));
    }
    assert_int_equal(hist_bucket_high(HIST_BUCKETS - 1), UINT64_MAX);
    static const uint64_t vals[] = {0, 1, 31, 32, 33, 63, 64, 65, 1000, 123456789, UINT64_MAX};
    for (size_t k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
        unsigned i = hist_index(vals[k]);
        assert_true(i < HIST_BUCKETS);
        assert_true(hist_bucket_low(i) <= vals[k] && vals[k] <= hist_bucket_high(i));
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_quantiles_within_bucket_error(void **st)
{
    (void)st;
    enum { N = 100000 };
    static uint64_t v[N];
    static struct hist h;
    hist_init(&h);
    srand(1);
    for (int i = 0; i < N; i++) {
        /* long tail: mostly 10..20 us, some up to ~10 ms (in ns) */
        v[i] = 10000 + (uint64_t)(rand() % 10000);
        if (i % 100 == 0)
            v[i] = (uint64_t)(rand() % 10000000);
        hist_add(&h, v[i]);
    }
    qsort(v, N, sizeof(v[0]), cmp_u64);
    static const double qs[] = {0.5, 0.9, 0.99, 0.999, 1.0};
    for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
        uint64_t exact = v[(size_t)(qs[k] * N + 0.999999) - 1];
        uint64_t got = hist_quantile(&h, qs[k]);
        assert_true(got >= exact);
        assert_true(got - exact <= exact / HIST_SUB + 1);
    }
    assert_int_equal(hist_quantile(&h, 1.0), v[N - 1]);
    assert_int_equal(h.max, v[N - 1]);
    assert_int_equal(h.min, v[0]);
    assert_int_equal(h.count, N);
}

static void test_small_and_empty(void **st)
{
    (void)st;
    struct hist h, g;
    hist_init(&h);
    assert_int_equal(hist_quantile(&h, 0.5), 0);
    hist_add(&h, 7);
    assert_int_equal(hist_quantile(&h, 0.5), 7);
    assert_int_equal(hist_quantile(&h, 0.999), 7);
    hist_init(&g);
    for (int i = 1; i <= 4; i++)
        hist_add(&g, (uint64_t)i);
    hist_merge(&h, &g);
    assert_int_equal(h.count, 5);
    assert_int_equal(hist_quantile(&h, 0.5), 3); /* 1 2 3 4 7 */
    assert_int_equal(hist_quantile(&h, 1.0), 7);
    assert_int_equal(h.min, 1);
}

/* Parses "[[i,c],[i,c],...]" after "b": back into buckets; returns pairs. */
static unsigned parse_pairs(const char *doc, uint32_t *bucket)
{
    const char *p = strstr(doc, "\"b\":[");
    assert_non_null(p);
    p += 5;
    unsigned n = 0, i, c;
    int used;
    while (sscanf(p, "[%u,%u]%n", &i, &c, &used) == 2) {
        assert_true(i < HIST_BUCKETS);
        assert_int_equal(bucket[i], 0); /* no bucket twice */
        bucket[i] = c;
        n++;
        p += used;
        if (*p == ',')
            p++;
    }
    assert_int_equal(*p, ']');
    return n;
}

static void test_json_buckets_round_trip_in_parts(void **st)
{
    (void)st;
    static struct hist h;
    static uint32_t back[HIST_BUCKETS];
    static char buf[8192];
    hist_init(&h);
    /* Every bucket non-empty: the worst case, several parts. */
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        h.bucket[i] = UINT32_MAX - i;
    unsigned from = 0, parts = 0, total = 0;
    while (from < HIST_BUCKETS) {
        struct json j;
        json_init(&j, buf, sizeof(buf));
        json_obj_begin(&j, NULL);
        unsigned n = hist_json_buckets(&j, &h, &from);
        json_obj_end(&j);
        const char *doc = json_finish(&j);
        assert_false(j.overflow);
        assert_true(n > 0 && n <= HIST_LINE_BUCKETS);
        assert_int_equal(parse_pairs(doc, back), n);
        total += n;
        parts++;
    }
    assert_int_equal(total, HIST_BUCKETS);
    assert_int_equal(parts, (HIST_BUCKETS + HIST_LINE_BUCKETS - 1) / HIST_LINE_BUCKETS);
    assert_memory_equal(back, h.bucket, sizeof(back));
}

static void test_json_buckets_sparse_skips_empty_tail(void **st)
{
    (void)st;
    static struct hist h;
    static uint32_t back[HIST_BUCKETS];
    static char buf[8192];
    hist_init(&h);
    /* Exactly one part's worth of buckets, the last far from the end. */
    for (unsigned i = 0; i < HIST_LINE_BUCKETS; i++)
        h.bucket[i * 2] = i + 1;
    struct json j;
    json_init(&j, buf, sizeof(buf));
    json_obj_begin(&j, NULL);
    unsigned from = 0;
    assert_int_equal(hist_json_buckets(&j, &h, &from), HIST_LINE_BUCKETS);
    json_obj_end(&j);
    /* Nothing is left after it: no empty second part. */
    assert_int_equal(from, HIST_BUCKETS);
    assert_int_equal(parse_pairs(json_finish(&j), back), HIST_LINE_BUCKETS);
    assert_memory_equal(back, h.bucket, sizeof(back));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets_cover_values),
        cmocka_unit_test(test_quantiles_within_bucket_error),
        cmocka_unit_test(test_small_and_empty),
        cmocka_unit_test(test_json_buckets_round_trip_in_parts),
        cmocka_unit_test(test_json_buckets_sparse_skips_empty_tail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
