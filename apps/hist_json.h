/* The histogram's buckets as JSON for "hist" lines (docs/protocol.md);
 * apart from hist.c so the host peer, which links hist.c, needs no JSON. */
#ifndef VN_HIST_JSON_H
#define VN_HIST_JSON_H

#include "apps/hist.h"
#include "kernel/json.h"

/* Non-empty buckets per "hist" line (docs/protocol.md): a pair is at most
 * "[1919,4294967295]," (18 bytes), so a line stays far below the result
 * buffer (kernel/result.c), which all 1920 buckets at once would not fit. */
#define HIST_LINE_BUCKETS 256

/* Writes "b": [[index, count], ...] with up to HIST_LINE_BUCKETS non-empty
 * buckets from index *from on and advances *from past the last one
 * written (HIST_BUCKETS when none is left). Returns how many it wrote. */
unsigned hist_json_buckets(struct json *j, const struct hist *h, unsigned *from);

#endif
