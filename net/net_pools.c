/* lwIP's memory in use (its heap and every memp pool), for the soak check:
 * a leak shows as a count that grows over a long run. */
#include <stddef.h>

#include "kernel/json.h"
#include "lwip/memp.h"
#include "lwip/stats.h"
#include "net/net.h"

static const char *const pool_names[MEMP_MAX] = {
#define LWIP_MEMPOOL(name, num, size, desc) #name,
#include "lwip/priv/memp_std.h"
};

static void lower_name(const char *s, char *out, size_t cap)
{
    size_t i = 0;
    for (; s[i] && i + 1 < cap; i++)
        out[i] = (s[i] >= 'A' && s[i] <= 'Z') ? (char)(s[i] - 'A' + 'a') : s[i];
    out[i] = '\0';
}

void net_pools_json(struct json *j)
{
    char name[24];
    json_obj_begin(j, "lwip");
    json_u64(j, "heap", lwip_stats.mem.used);
    json_u64(j, "heap_err", lwip_stats.mem.err);
    for (int i = 0; i < MEMP_MAX; i++) {
        /* memp_init() sets these: nothing before the stack is up. */
        if (!lwip_stats.memp[i])
            continue;
        lower_name(pool_names[i], name, sizeof(name));
        json_u64(j, name, lwip_stats.memp[i]->used);
    }
    json_obj_end(j);
}
