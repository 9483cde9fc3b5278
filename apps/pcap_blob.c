#include "apps/pcap_blob.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static uint64_t rd_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static int pcap_blob_header(struct pcap_blob *b, const uint8_t *base, size_t size, char *why,
                            size_t whylen)
{
    if (size < PCAP_BLOB_HDR) {
        snprintf(why, whylen, "pcap blob: %zu bytes, shorter than its %u-byte header", size,
                 PCAP_BLOB_HDR);
        return -EINVAL;
    }
    if (memcmp(base, PCAP_BLOB_MAGIC, 8) != 0) {
        snprintf(why, whylen, "pcap blob: bad magic (not written by vnperf's runner)");
        return -EINVAL;
    }
    uint64_t frames = rd_le(base + 8, 4), maxlen = rd_le(base + 12, 2);
    b->bytes = rd_le(base + 16, 8);
    if (frames == 0 || frames > PCAP_BLOB_MAX_FRAMES) {
        snprintf(why, whylen, "pcap blob: %llu frames, must be 1..%u", (unsigned long long)frames,
                 PCAP_BLOB_MAX_FRAMES);
        return -EINVAL;
    }
    if (rd_le(base + 14, 2) != 0 || maxlen < PCAP_BLOB_MIN_FRAME || maxlen > PCAP_BLOB_MAX_FRAME) {
        snprintf(why, whylen, "pcap blob: largest frame %llu, must be %u..%u",
                 (unsigned long long)maxlen, PCAP_BLOB_MIN_FRAME, PCAP_BLOB_MAX_FRAME);
        return -EINVAL;
    }
    /* Both are bounded, so the expected size cannot wrap: the header says
     * exactly how large the blob is. */
    uint64_t want = PCAP_BLOB_HDR + frames * PCAP_BLOB_REC;
    if (b->bytes > frames * maxlen || b->bytes + want != size) {
        snprintf(why, whylen, "pcap blob: header says %llu frames of %llu bytes, the blob has %zu",
                 (unsigned long long)frames, (unsigned long long)b->bytes, size);
        return -EINVAL;
    }
    b->frames = (uint32_t)frames;
    b->maxlen = (uint16_t)maxlen;
    return 0;
}

/* Every record inside the blob, of a length within the header's, the
 * gaps' sum within PCAP_BLOB_MAX_SPAN, the lengths adding up to bytes. */
static int pcap_blob_walk(struct pcap_blob *b, char *why, size_t whylen)
{
    size_t off = PCAP_BLOB_HDR;
    uint64_t bytes = 0, span = 0;
    for (uint32_t i = 0; i < b->frames; i++) {
        if (b->size - off < PCAP_BLOB_REC) {
            snprintf(why, whylen, "pcap blob: frame %u's record runs past the end", i);
            return -EINVAL;
        }
        uint64_t len = rd_le(b->base + off, 2), gap = rd_le(b->base + off + 2, 6);
        off += PCAP_BLOB_REC;
        if (len < PCAP_BLOB_MIN_FRAME || len > b->maxlen || len > b->size - off) {
            snprintf(why, whylen, "pcap blob: frame %u: length %llu (largest %u, %zu bytes left)",
                     i, (unsigned long long)len, b->maxlen, b->size - off);
            return -EINVAL;
        }
        if ((i == 0 && gap) || gap > PCAP_BLOB_MAX_SPAN - span) {
            snprintf(why, whylen,
                     "pcap blob: frame %u: gap %llu ns (the first is 0, all at most "
                     "%llu ns)",
                     i, (unsigned long long)gap, (unsigned long long)PCAP_BLOB_MAX_SPAN);
            return -EINVAL;
        }
        span += gap;
        bytes += len;
        off += len;
    }
    if (bytes != b->bytes || off != b->size) {
        snprintf(why, whylen, "pcap blob: the frames hold %llu bytes, the header says %llu",
                 (unsigned long long)bytes, (unsigned long long)b->bytes);
        return -EINVAL;
    }
    b->span_ns = span;
    return 0;
}

int pcap_blob_load(struct pcap_blob *b, const uint8_t *base, size_t size, char *why, size_t whylen)
{
    memset(b, 0, sizeof(*b));
    b->base = base;
    b->size = size;
    if (pcap_blob_header(b, base, size, why, whylen) < 0 || pcap_blob_walk(b, why, whylen) < 0) {
        memset(b, 0, sizeof(*b));
        return -EINVAL;
    }
    return 0;
}

void pcap_blob_rewind(struct pcap_cursor *c)
{
    c->off = PCAP_BLOB_HDR;
    c->idx = 0;
}
