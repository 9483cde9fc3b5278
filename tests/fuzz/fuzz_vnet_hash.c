/* drivers/virtio/vnet_hash.c: any frame bytes, hash types and report.
 * The first 7 input bytes are the types (2), the report (1: types 0..10
 * and 0xffff) and the value (4); the rest is the frame. Checks: no read
 * past the frame (ASan), NONE owed for a frame of no IP header, a report
 * the configured types do not have is BAD_TYPE, the owed report checks
 * OK and the same type with another value BAD_VALUE. */
#include <stdlib.h>
#include <string.h>

#include "drivers/virtio/vnet_hash.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n < 7 || n > 4096)
        return 0;
    uint32_t types = (uint32_t)(data[0] | data[1] << 8) & 0x1ffu;
    uint16_t report = data[2] > 10 ? 0xffff : data[2];
    uint32_t value;
    memcpy(&value, data + 3, 4);
    uint32_t len = (uint32_t)(n - 7);
    /* a copy of exactly len bytes: ASan sees any read past the frame */
    uint8_t *f = malloc(len ? len : 1);
    memcpy(f, data + 7, len);
    uint32_t owed;
    uint16_t t = vnet_hash_expect(f, len, types, &owed);
    FUZZ_CHECK(t == VNET_HASH_UNKNOWN || t <= VIRTIO_NET_HASH_REPORT_UDPv6);
    if (len < 34)
        FUZZ_CHECK(t == VIRTIO_NET_HASH_REPORT_NONE);
    if (t != VNET_HASH_UNKNOWN && t != VIRTIO_NET_HASH_REPORT_NONE) {
        FUZZ_CHECK(types & (1u << (t - 1)));
        FUZZ_CHECK(vnet_hash_check(f, len, types, owed, t) == VNET_HASH_OK);
        FUZZ_CHECK(vnet_hash_check(f, len, types, owed ^ 1, t) == VNET_HASH_BAD_VALUE);
    }
    enum vnet_hash_verdict v = vnet_hash_check(f, len, types, value, report);
    FUZZ_CHECK(v < VNET_HASH_NVERDICT);
    if (report > VIRTIO_NET_HASH_REPORT_UDPv6_EX || (report && !(types & (1u << (report - 1)))))
        FUZZ_CHECK(v == VNET_HASH_BAD_TYPE);
    free(f);
    return 0;
}
