/* apps/pcap_blob.c: any bytes as the fw_cfg capture. What it accepts is
 * walked twice around: every record inside the blob, of a length within
 * the header's, the lengths and gaps adding up to what the load said. */
#include <errno.h>
#include <string.h>

#include "apps/pcap_blob.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    /* A copy of exactly n bytes: ASan sees a read past the end. */
    uint8_t *b = malloc(n ? n : 1);
    memcpy(b, data, n);
    char why[160];
    struct pcap_blob blob;
    int rc = pcap_blob_load(&blob, b, n, why, sizeof(why));
    if (rc < 0) {
        FUZZ_CHECK(rc == -EINVAL && fuzz_terminated(why, sizeof(why)) && why[0]);
        free(b);
        return 0;
    }
    FUZZ_CHECK(blob.frames >= 1 && blob.maxlen >= PCAP_BLOB_MIN_FRAME);
    struct pcap_cursor c;
    struct pcap_rec r;
    pcap_blob_rewind(&c);
    for (unsigned loop = 0; loop < 2; loop++) {
        uint64_t bytes = 0, span = 0;
        for (uint32_t i = 0; i < blob.frames; i++) {
            FUZZ_CHECK(c.idx == i);
            pcap_blob_next(&blob, &c, &r);
            FUZZ_CHECK(r.len >= PCAP_BLOB_MIN_FRAME && r.len <= blob.maxlen);
            FUZZ_CHECK(r.data >= b + PCAP_BLOB_HDR && r.data + r.len <= b + n);
            FUZZ_CHECK(i || r.gap_ns == 0);
            bytes += r.len;
            span += r.gap_ns;
        }
        FUZZ_CHECK(bytes == blob.bytes && span == blob.span_ns && span <= PCAP_BLOB_MAX_SPAN);
    }
    free(b);
    return 0;
}
