#include "apps/stream_size.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int stream_size_init(struct stream_size *z, const struct stream_spec *p)
{
    const struct imix *m = &p->sizes;
    memset(z, 0, sizeof(*z));
    z->len = m->size[0];
    if (p->size_range || m->n == 1)
        return 0;
    z->seq = malloc(m->cycle);
    if (!z->seq)
        return -ENOMEM;
    imix_sequence(m, z->seq);
    return 0;
}

uint16_t stream_size_max(const struct stream_spec *p)
{
    uint16_t l = 0;
    for (unsigned k = 0; k < p->sizes.n; k++)
        l = p->sizes.size[k] > l ? p->sizes.size[k] : l;
    return l;
}
