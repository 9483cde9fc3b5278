/* app=selftest: checks the kernel's own services (heap, timer) and
 * reports; duration=N adds an N-second TSC wait bracketed by two marker
 * lines so the host can compare guest time with its wall clock. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app_config.h"
#include "apps/app_list.h"
#include "kernel/exit.h"
#include "kernel/mem.h"
#include "kernel/result.h"
#include "kernel/time.h"

#define SLOTS 512

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Random malloc/realloc/free with a fill pattern checked before every
 * free: catches overlapping blocks and a broken sbrk. */
static int heap_stress(unsigned rounds, uint64_t seed, uint64_t *bytes_out)
{
    static void *ptr[SLOTS];
    static size_t len[SLOTS];
    uint64_t bytes = 0;

    seed |= 1;

    for (unsigned r = 0; r < rounds; r++) {
        unsigned i = (unsigned)(xorshift(&seed) % SLOTS);
        if (ptr[i]) {
            const uint8_t *p = ptr[i];
            for (size_t k = 0; k < len[i]; k++)
                if (p[k] != (uint8_t)(i + k)) {
                    printf("selftest: heap block %u corrupted at byte %zu\n", i, k);
                    return -1;
                }
            free(ptr[i]);
            ptr[i] = NULL;
            continue;
        }
        len[i] = 1 + (size_t)(xorshift(&seed) % (xorshift(&seed) & 1 ? 64 : 65536));
        ptr[i] = malloc(len[i]);
        if (!ptr[i])
            vn_fatal(VN_EXIT_OOM, "selftest: malloc(%zu) failed", len[i]);
        for (size_t k = 0; k < len[i]; k++)
            ((uint8_t *)ptr[i])[k] = (uint8_t)(i + k);
        bytes += len[i];
    }
    for (unsigned i = 0; i < SLOTS; i++) {
        free(ptr[i]);
        ptr[i] = NULL;
    }
    *bytes_out = bytes;
    return 0;
}

static int dma_check(void)
{
    for (size_t align = 16; align <= 65536; align <<= 1) {
        uint8_t *p = mem_alloc_dma(3000, align);
        if ((uintptr_t)p & (align - 1)) {
            printf("selftest: mem_alloc_dma align %zu gave %p\n", align, (void *)p);
            return -1;
        }
        for (int k = 0; k < 3000; k++)
            if (p[k]) {
                printf("selftest: mem_alloc_dma not zeroed\n");
                return -1;
            }
    }
    return 0;
}

int app_selftest_main(const struct app_config *c)
{
    uint64_t t0 = time_ns(), heap_bytes = 0;
    int ok = heap_stress(5000, c->seed, &heap_bytes) == 0 && dma_check() == 0;
    uint64_t t1 = time_ns();

    if (c->duration_s) {
        struct json *j = result_begin("mark");
        json_str(j, "name", "wait_start");
        json_u64(j, "t_ns", time_ns());
        result_end();
        time_delay_us(c->duration_s * 1000000u);
        j = result_begin("mark");
        json_str(j, "name", "wait_end");
        json_u64(j, "t_ns", time_ns());
        result_end();
    }

    struct mem_stats ms;
    mem_get_stats(&ms);
    struct json *j = result_begin("result");
    json_str(j, "app", "selftest");
    json_bool(j, "ok", ok);
    json_u64(j, "heap_bytes_allocated", heap_bytes);
    json_u64(j, "heap_high_water", ms.heap_used);
    json_u64(j, "dma_bytes", ms.pages_used);
    json_u64(j, "ram_bytes", ms.ram_total);
    json_u64(j, "stress_ns", t1 - t0);
    json_u64(j, "tsc_hz", time_tsc_hz);
    json_u64(j, "packets", 0);
    json_u64(j, "bytes", 0);
    json_u64(j, "pps", 0);
    json_u64(j, "bps", 0);
    json_u64(j, "duration_ns", time_ns() - t0);
    result_end();
    return ok ? VN_EXIT_OK : VN_EXIT_TEST_FAILED;
}
