/* The one 64-bit kernel entry, shared by the PVH and UEFI paths.
 * In: long mode, paging on, %rdi = boot_info. We take our own stack at
 * once (the caller's may be firmware memory we are about to reuse) and
 * enable SSE before any compiled code runs. */

    .text
    .globl kernel_entry64
kernel_entry64:
    cli
    cld
    movq $kernel_stack_top, %rsp
    xorl %ebp, %ebp
    movq %cr0, %rax
    andq $~(1 << 2), %rax        /* EM off */
    orq $(1 << 1), %rax          /* MP on */
    movq %rax, %cr0
    movq %cr4, %rax
    orq $(1 << 9) | (1 << 10), %rax /* OSFXSR, OSXMMEXCPT */
    movq %rax, %cr4
    fninit
    call kernel_start            /* boot/start.c: never returns */
1:  hlt
    jmp 1b

    .section .bss
    .p2align 12
    .globl kernel_stack_bottom
kernel_stack_bottom:
    .skip 65536
    .globl kernel_stack_top
kernel_stack_top:

    .section .note.GNU-stack, "", @progbits
