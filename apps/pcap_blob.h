/* The capture app=replay sends (docs/replay.md, "The blob"): the runner
 * turns a PCAP file into this and hands it over as the fw_cfg file
 * opt/vnperf/pcap. Everything in it is checked before a frame is read:
 * lengths, the record walk's offsets against the size, the frame and
 * byte totals, the span of the recorded gaps. Pure: no port access,
 * fuzzed on the host (tests/fuzz/fuzz_pcap_blob.c). */
#ifndef VN_PCAP_BLOB_H
#define VN_PCAP_BLOB_H

#include <stddef.h>
#include <stdint.h>

/* Little-endian throughout.
 *   header  magic[8] "VNPCAP\0\1", u32 frames, u16 maxlen, u16 zero,
 *           u64 bytes (the frames' lengths added up)
 *   record  u16 len, u48 gap, then len bytes: gap is the time since the
 *           previous frame in ns (frame 0's is 0) */
#define PCAP_BLOB_MAGIC      "VNPCAP\0\1"
#define PCAP_BLOB_HDR        24u
#define PCAP_BLOB_REC        8u
#define PCAP_BLOB_MIN_FRAME  14u          /* an Ethernet header */
#define PCAP_BLOB_MAX_FRAME  9216u        /* the runner refuses larger (and the MTU's) */
#define PCAP_BLOB_MAX_FRAMES 16777216u    /* 2^24 */
#define PCAP_BLOB_MAX_SPAN   (1ull << 48) /* ns a loop may last: 78 h */

_Static_assert(PCAP_BLOB_MAX_FRAME <= UINT16_MAX, "a record's len is 16 bits");
_Static_assert(PCAP_BLOB_HDR +
                       (uint64_t)PCAP_BLOB_MAX_FRAMES * (PCAP_BLOB_REC + PCAP_BLOB_MAX_FRAME) <
                   (1ull << 63),
               "the largest blob's size adds up in 64 bits");

struct pcap_blob {
    const uint8_t *base;
    size_t size;
    uint32_t frames;
    uint16_t maxlen;
    uint64_t bytes;   /* the frames' lengths */
    uint64_t span_ns; /* the gaps added up: one loop at recorded timing */
};

/* A walk over the records; pcap_blob_next wraps to the first frame. */
struct pcap_cursor {
    size_t off;
    uint32_t idx;
};

struct pcap_rec {
    const uint8_t *data;
    uint16_t len;
    uint64_t gap_ns;
};

/* Checks the whole blob (size bytes at base) and fills b: 0, or -EINVAL
 * with one line in why naming the first thing wrong. */
int pcap_blob_load(struct pcap_blob *b, const uint8_t *base, size_t size, char *why, size_t whylen);

void pcap_blob_rewind(struct pcap_cursor *c);

/* The record at c, then c moves on (back to frame 0 after the last).
 * Only on a blob pcap_blob_load accepted. */
static inline void pcap_blob_next(const struct pcap_blob *b, struct pcap_cursor *c,
                                  struct pcap_rec *r)
{
    const uint8_t *p = b->base + c->off;
    r->len = (uint16_t)(p[0] | p[1] << 8);
    r->gap_ns = (uint64_t)(p[6] | p[7] << 8) << 32 |
                (uint32_t)(p[2] | p[3] << 8 | p[4] << 16 | (uint32_t)p[5] << 24);
    r->data = p + PCAP_BLOB_REC;
    c->off += PCAP_BLOB_REC + r->len;
    if (++c->idx == b->frames) {
        c->idx = 0;
        c->off = PCAP_BLOB_HDR;
    }
}

#endif
