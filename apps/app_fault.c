/* app=fault: raises the exception named by fault= so the tests can check
 * the dump and the "fault" exit code. */
#include <stdint.h>
#include <stdio.h>

#include "apps/app_config.h"
#include "apps/app_list.h"
#include "kernel/exit.h"

int app_fault_main(const struct app_config *c)
{
    printf("fault: raising %s\n", app_config_enum_name("fault", c->fault));
    switch (c->fault) {
    case CFG_FAULT_PF: /* page fault: an address no page table maps (above 512 GiB) */
        (void)*(volatile uint64_t *)(uintptr_t)0x00007e0000000000ull;
        break;
    case CFG_FAULT_UD:
        __asm__ volatile("ud2");
        break;
    case CFG_FAULT_GP: /* non-canonical address -> #GP */
        (void)*(volatile uint64_t *)(uintptr_t)0x8000000000000000ull;
        break;
    case CFG_FAULT_DE: {
        volatile uint32_t zero = 0;
        uint32_t q;
        __asm__ volatile("divl %2" : "=a"(q) : "a"(1), "r"(zero), "d"(0));
        (void)q;
        break;
    }
    }
    return VN_EXIT_INTERNAL; /* still here: the exception did not happen */
}
