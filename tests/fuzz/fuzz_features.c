/* drivers/virtio/vnet_features.c: features= (the config check and the
 * driver's parse must agree, and only switchable bits come out). */
#include <errno.h>

#include "drivers/virtio/vnet.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n > 512)
        return 0;
    char *s = fuzz_cstr(data, n);
    char why[400];
    uint64_t off = 0;
    int c = vnet_features_check(s, why, sizeof(why));
    int p = vnet_features_parse(s, &off);
    FUZZ_CHECK(c == p && (c == 0 || c == -EINVAL));
    if (c < 0)
        FUZZ_CHECK(fuzz_terminated(why, sizeof(why)) && why[0]);
    else if (!*s)
        FUZZ_CHECK(off == 0);
    free(s);
    return 0;
}
