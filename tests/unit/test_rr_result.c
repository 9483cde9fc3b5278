/* apps/rr_result.c: the rr result's common members, a server's without
 * latency (zeros) and a client's from its histogram. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "apps/rr_result.h"

static const char *rr_json(char *b, size_t n, const struct rr_result *r, double tps)
{
    static struct json j;
    json_init(&j, b, n);
    json_obj_begin(&j, NULL);
    rr_result_json(&j, r, tps);
    json_obj_end(&j);
    return json_finish(&j);
}

static void server_has_no_latency(void **st)
{
    (void)st;
    char b[512];
    struct rr_result r = {.server = true,
                          .tcp = true,
                          .sessions = 2,
                          .req_size = 1,
                          .resp_size = 3,
                          .transactions = 10};
    assert_string_equal(rr_json(b, sizeof(b), &r, 5),
                        "{\"role\":\"server\",\"proto\":\"tcp\",\"sessions\":2,\"req_size\":1,"
                        "\"resp_size\":3,\"transactions\":10,\"tps\":5,\"timeouts\":0,\"late\":0,"
                        "\"unsent\":0,\"p50_us\":0,\"p90_us\":0,\"p99_us\":0,\"p999_us\":0,"
                        "\"max_us\":0,\"mean_us\":0}");
}

static void client_reads_its_histogram_in_us(void **st)
{
    (void)st;
    static struct hist h;
    hist_init(&h);
    for (int k = 0; k < 4; k++)
        hist_add(&h, 2000);
    char b[512];
    struct rr_result r = {
        .sessions = 1, .transactions = 4, .timeouts = 1, .late = 2, .unsent = 3, .lat = &h};
    assert_string_equal(rr_json(b, sizeof(b), &r, 4),
                        "{\"role\":\"client\",\"proto\":\"udp\",\"sessions\":1,\"req_size\":0,"
                        "\"resp_size\":0,\"transactions\":4,\"tps\":4,\"timeouts\":1,\"late\":2,"
                        "\"unsent\":3,\"p50_us\":2,\"p90_us\":2,\"p99_us\":2,\"p999_us\":2,"
                        "\"max_us\":2,\"mean_us\":2}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(server_has_no_latency),
        cmocka_unit_test(client_reads_its_histogram_in_us),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
