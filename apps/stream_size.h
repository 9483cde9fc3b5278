/* A stream's frame lengths in turn: one size, a mix's sizes in the order
 * apps/imix.c spreads them, or a range walked from its low end to its
 * high one and again. The guest's gen and the host peer's stream sender
 * (tools/peer/peer_gen.c) walk them alike. */
#ifndef VN_STREAM_SIZE_H
#define VN_STREAM_SIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "apps/stream_spec.h"

struct stream_size {
    uint8_t *seq; /* a mix's size indexes in turn, NULL for one size or a range */
    unsigned pos;
    uint8_t cls;  /* a mix's size index of the last frame */
    uint16_t len; /* one size; a range's next */
};

/* The walk of spec p's sizes: 0, or -ENOMEM for a mix's order. */
int stream_size_init(struct stream_size *z, const struct stream_spec *p);

/* The largest of p's frames. */
uint16_t stream_size_max(const struct stream_spec *p);

/* The next frame's length; varies: the sizes are more than one. */
static inline uint16_t stream_size_next(struct stream_size *z, const struct stream_spec *p,
                                        bool varies)
{
    if (!varies)
        return z->len;
    if (z->seq) {
        z->cls = z->seq[z->pos];
        z->pos = z->pos + 1 == p->sizes.cycle ? 0 : z->pos + 1;
        return p->sizes.size[z->cls];
    }
    uint16_t l = z->len;
    z->len = l == p->sizes.size[1] ? p->sizes.size[0] : (uint16_t)(l + 1);
    return l;
}

#endif
