/* apps/imix.c: imix= at any device frame limit; what it accepts must be
 * frames the device takes, and one cycle must hold each size weight times. */
#include <errno.h>

#include "apps/imix.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n < 2 || n > 512)
        return 0;
    /* The largest frame a device takes: its 16-bit MTU + 14. */
    uint32_t max_frame = 14 + (uint32_t)(data[0] | data[1] << 8);
    char *s = fuzz_cstr(data + 2, n - 2);
    char why[200];
    struct imix m;
    int rc = imix_parse(s, max_frame, &m, why, sizeof(why));
    if (rc < 0) {
        FUZZ_CHECK(rc == -EINVAL && fuzz_terminated(why, sizeof(why)) && why[0]);
        free(s);
        return 0;
    }
    FUZZ_CHECK(m.n >= 1 && m.n <= IMIX_MAX_SIZES);
    FUZZ_CHECK(m.cycle >= m.n && m.cycle <= IMIX_MAX_WEIGHT);
    unsigned sum = 0;
    for (unsigned i = 0; i < m.n; i++) {
        FUZZ_CHECK(m.size[i] >= 60 && m.size[i] <= max_frame);
        FUZZ_CHECK(m.weight[i] >= 1);
        sum += m.weight[i];
    }
    FUZZ_CHECK(sum == m.cycle);
    static uint8_t seq[IMIX_MAX_WEIGHT];
    unsigned seen[IMIX_MAX_SIZES] = {0};
    imix_sequence(&m, seq);
    for (unsigned k = 0; k < m.cycle; k++) {
        FUZZ_CHECK(seq[k] < m.n);
        seen[seq[k]]++;
    }
    for (unsigned i = 0; i < m.n; i++)
        FUZZ_CHECK(seen[i] == m.weight[i]);
    free(s);
    return 0;
}
