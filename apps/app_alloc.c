/* app=alloc: takes alloc_mb MiB from the heap in 1 MiB blocks, touching
 * every page; more than the guest has ends in the out-of-memory exit. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app_config.h"
#include "apps/app_list.h"
#include "kernel/exit.h"
#include "kernel/result.h"

int app_alloc_main(const struct app_config *c)
{
    const size_t block = 1u << 20;
    uint64_t got = 0;

    for (uint64_t i = 0; i < c->alloc_mb; i++) {
        uint8_t *p = malloc(block);
        if (!p)
            vn_fatal(VN_EXIT_OOM, "out of memory: heap exhausted after %llu MiB of %llu MiB",
                     (unsigned long long)got, (unsigned long long)c->alloc_mb);
        for (size_t k = 0; k < block; k += 4096)
            p[k] = (uint8_t)k;
        got++;
    }
    struct json *j = result_begin("result");
    json_str(j, "app", "alloc");
    json_u64(j, "allocated_mb", got);
    json_u64(j, "packets", 0);
    json_u64(j, "bytes", 0);
    json_u64(j, "pps", 0);
    json_u64(j, "bps", 0);
    result_end();
    return VN_EXIT_OK;
}
