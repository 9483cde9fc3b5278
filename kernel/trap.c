/* CPU exceptions: one dump, then the "fault" exit code. */
#include <stdint.h>
#include <stdio.h>

#include "kernel/exit.h"
#include "kernel/result.h"

struct trap_frame {
    uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
    uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
    uint64_t vector, error;
    uint64_t rip, cs, rflags, rsp, ss;
};

static const char *const vector_names[32] = {
    "#DE divide error",
    "#DB debug",
    "NMI",
    "#BP breakpoint",
    "#OF overflow",
    "#BR bound range",
    "#UD invalid opcode",
    "#NM device not available",
    "#DF double fault",
    "coprocessor segment overrun",
    "#TS invalid TSS",
    "#NP segment not present",
    "#SS stack fault",
    "#GP general protection",
    "#PF page fault",
    "reserved 15",
    "#MF x87 FP error",
    "#AC alignment check",
    "#MC machine check",
    "#XM SIMD FP exception",
    "#VE virtualization exception",
    "#CP control protection",
    "reserved 22",
    "reserved 23",
    "reserved 24",
    "reserved 25",
    "reserved 26",
    "reserved 27",
    "#HV hypervisor injection",
    "#VC VMM communication",
    "#SX security exception",
    "reserved 31",
};

void trap_handler(const struct trap_frame *f);

void trap_handler(const struct trap_frame *f)
{
    static int nested;
    uint64_t cr2;
    const char *name = f->vector < 32 ? vector_names[f->vector] : "unknown";

    __asm__ volatile("mov %%cr2, %0" : "=r"(cr2));
    if (nested++) {
        /* A fault while dumping: the console path itself is broken. */
        vn_exit(VN_EXIT_FAULT);
    }
    printf("\nFAULT: vector %llu (%s) error 0x%llx\n", (unsigned long long)f->vector, name,
           (unsigned long long)f->error);
    printf("  rip %016llx  cs %04llx  rflags %016llx  cr2 %016llx\n", (unsigned long long)f->rip,
           (unsigned long long)f->cs, (unsigned long long)f->rflags, (unsigned long long)cr2);
    printf("  rsp %016llx  ss %04llx\n", (unsigned long long)f->rsp, (unsigned long long)f->ss);
    printf("  rax %016llx  rbx %016llx  rcx %016llx  rdx %016llx\n", (unsigned long long)f->rax,
           (unsigned long long)f->rbx, (unsigned long long)f->rcx, (unsigned long long)f->rdx);
    printf("  rsi %016llx  rdi %016llx  rbp %016llx  r8  %016llx\n", (unsigned long long)f->rsi,
           (unsigned long long)f->rdi, (unsigned long long)f->rbp, (unsigned long long)f->r8);
    printf("  r9  %016llx  r10 %016llx  r11 %016llx  r12 %016llx\n", (unsigned long long)f->r9,
           (unsigned long long)f->r10, (unsigned long long)f->r11, (unsigned long long)f->r12);
    printf("  r13 %016llx  r14 %016llx  r15 %016llx\n", (unsigned long long)f->r13,
           (unsigned long long)f->r14, (unsigned long long)f->r15);

    struct json *j = result_begin("error");
    json_i64(j, "code", VN_EXIT_FAULT);
    json_str(j, "reason", vn_exit_name(VN_EXIT_FAULT));
    json_u64(j, "vector", f->vector);
    json_str(j, "vector_name", name);
    json_u64(j, "error_code", f->error);
    json_u64(j, "rip", f->rip);
    json_u64(j, "cr2", cr2);
    json_u64(j, "rsp", f->rsp);
    result_end();
    vn_exit(VN_EXIT_FAULT);
}
