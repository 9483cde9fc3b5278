/* PVH direct boot (QEMU -kernel): 32-bit protected mode, paging off,
 * %ebx = hvm_start_info. We build a temporary identity map of the low
 * 4 GiB with 2 MiB pages, switch to long mode and hand over to C, which
 * turns start_info into a boot_info and calls kernel_entry64. */

#include "boot/pvh_note.h"

    PVH_NOTE(pvh_entry32)

    .section .text.boot32, "ax"
    .code32
    .globl pvh_entry32
pvh_entry32:
    cli
    cld
    rdtsc
    movl %eax, pvh_tsc_boot
    movl %edx, pvh_tsc_boot + 4
    movl %ebx, pvh_start_info
    movl $pvh_stack_top, %esp

    /* PD entries: 2048 x 2 MiB, present | writable | page size */
    movl $pvh_pd, %edi
    xorl %ecx, %ecx
1:  movl %ecx, %eax
    shll $21, %eax
    orl $0x83, %eax
    movl %eax, (%edi,%ecx,8)
    movl %ecx, %eax
    shrl $11, %eax
    movl %eax, 4(%edi,%ecx,8)
    incl %ecx
    cmpl $2048, %ecx
    jne 1b
    /* PDPT[0..3] -> the four PDs */
    movl $pvh_pdpt, %edi
    movl $pvh_pd + 0x003, %eax
    xorl %ecx, %ecx
2:  movl %eax, (%edi,%ecx,8)
    movl $0, 4(%edi,%ecx,8)
    addl $4096, %eax
    incl %ecx
    cmpl $4, %ecx
    jne 2b
    movl $pvh_pdpt + 0x003, %eax
    movl %eax, pvh_pml4

    movl %cr4, %eax
    orl $(1 << 5) | (1 << 9) | (1 << 10), %eax /* PAE, OSFXSR, OSXMMEXCPT */
    movl %eax, %cr4
    movl $pvh_pml4, %eax
    movl %eax, %cr3
    movl $0xc0000080, %ecx /* EFER.LME */
    rdmsr
    orl $(1 << 8), %eax
    wrmsr
    movl %cr0, %eax
    andl $~(1 << 2), %eax           /* EM off: SSE usable */
    orl $(1 << 31) | (1 << 1) | 1, %eax /* PG, MP, PE */
    movl %eax, %cr0
    lgdt pvh_gdt_desc
    ljmp $0x08, $pvh_entry64

    .code64
pvh_entry64:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    xorw %ax, %ax
    movw %ax, %fs
    movw %ax, %gs
    movq $pvh_stack_top, %rsp
    xorl %ebp, %ebp
    movl pvh_start_info, %edi
    movq pvh_tsc_boot, %rsi
    call pvh_start     /* boot/pvh_info.c, does not return */
3:  hlt
    jmp 3b

    .section .rodata
    .p2align 3
pvh_gdt:
    .quad 0
    .quad 0x00af9a000000ffff /* 0x08: 64-bit code */
    .quad 0x00cf92000000ffff /* 0x10: data */
pvh_gdt_end:
pvh_gdt_desc:
    .word pvh_gdt_end - pvh_gdt - 1
    .long pvh_gdt

    .section .bss
    .p2align 12
pvh_pml4:  .skip 4096
pvh_pdpt:  .skip 4096
pvh_pd:    .skip 4096 * 4
pvh_stack: .skip 8192
pvh_stack_top:
    .p2align 3
pvh_start_info: .skip 4
    .p2align 3
pvh_tsc_boot: .skip 8

    .section .note.GNU-stack, "", @progbits
