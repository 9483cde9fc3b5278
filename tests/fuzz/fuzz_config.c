/* kernel/config.c with the appliance's key table (apps/app_config_keys.c):
 * the whole config line and every key's parser (sizes, addresses, enums,
 * strings within their fields); the values checked after the table
 * (apps/app_config.c) have their own harnesses. */
#include <errno.h>

#include "apps/app_config.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    static struct app_config a, b;
    char err[256], err2[256];
    if (n > 4096)
        return 0;
    char *line = fuzz_cstr(data, n);
    memset(err, 'x', sizeof(err));
    int rc = app_config_parse(&a, line, n, err, sizeof(err));
    FUZZ_CHECK(rc == 0 || rc == -EINVAL);
    /* A NUL inside is refused, never the end of the text (issue 31 F8). */
    FUZZ_CHECK(!memchr(line, '\0', n) || (rc == -EINVAL && strstr(err, "NUL byte at offset")));
    if (rc < 0) {
        FUZZ_CHECK(fuzz_terminated(err, sizeof(err)) && err[0] != '\0');
    } else {
        FUZZ_CHECK(fuzz_terminated(a.app, sizeof(a.app)));
        FUZZ_CHECK(fuzz_terminated(a.rate, sizeof(a.rate)));
        FUZZ_CHECK(fuzz_terminated(a.imix, sizeof(a.imix)));
        FUZZ_CHECK(fuzz_terminated(a.flows, sizeof(a.flows)));
        FUZZ_CHECK(fuzz_terminated(a.features, sizeof(a.features)));
        /* An IPv6 address given is unicast and not link-local (the key's check). */
        FUZZ_CHECK(!app_config_given(&a, "ip6") ||
                   (a.ip6[0] != 0xff && !(a.ip6[0] == 0xfe && (a.ip6[1] & 0xc0) == 0x80)));
        FUZZ_CHECK(!app_config_given(&a, "dst_ip6") || a.dst_ip6[0] != 0xff);
        /* Every UINT key within the table's [min, max]. */
        for (size_t i = 0; i < app_config_table.nkeys; i++) {
            const struct cfg_key *k = &app_config_table.keys[i];
            uint64_t v = 0;
            if (k->type != CFG_UINT)
                continue;
            memcpy(&v, (const char *)&a + k->offset, k->size); /* little endian */
            FUZZ_CHECK(v >= k->min && v <= k->max);
        }
    }
    /* Same line, same outcome: no state kept between parses. */
    int rc2 = app_config_parse(&b, line, n, err2, sizeof(err2));
    FUZZ_CHECK(rc2 == rc);
    FUZZ_CHECK(rc < 0 ? strcmp(err, err2) == 0 : memcmp(&a, &b, sizeof(a)) == 0);
    free(line);
    return 0;
}
