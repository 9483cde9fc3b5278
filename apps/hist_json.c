#include "apps/hist_json.h"

unsigned hist_json_buckets(struct json *j, const struct hist *h, unsigned *from)
{
    unsigned n = 0, i = *from;
    json_arr_begin(j, "b");
    for (; i < HIST_BUCKETS && n < HIST_LINE_BUCKETS; i++) {
        if (!h->bucket[i])
            continue;
        json_arr_begin(j, NULL);
        json_u64(j, NULL, i);
        json_u64(j, NULL, h->bucket[i]);
        json_arr_end(j);
        n++;
    }
    json_arr_end(j);
    /* Past trailing empty buckets: the caller's loop ends with the data. */
    while (i < HIST_BUCKETS && !h->bucket[i])
        i++;
    *from = i;
    return n;
}
