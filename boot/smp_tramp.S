/* Application processor start (Intel SDM vol 3 8.4.4, 9.9): the startup
 * IPI starts an AP in real mode at CS = vector << 8, IP = 0, so the
 * 16-bit part below is copied to a free page under 1 MiB
 * (kernel/smp.c picks and checks it). It only switches to protected mode
 * and jumps to smp_ap_entry32 in the kernel image, which enters long mode
 * on the boot CPU's page tables (smp_boot_cr3, below 4 GiB) and calls
 * smp_ap_main on a stack of its own. The boot CPU starts every AP at once:
 * they share the page tables, and each takes the next stack top with one
 * lock xadd (smp_boot_stack, moved on by smp_boot_stack_step). */

#define CR0_PE   (1 << 0)
#define CR0_MP   (1 << 1)
#define CR0_ET   (1 << 4)
#define CR0_NE   (1 << 5)
#define CR0_PG   (1 << 31)
#define CR4_PAE  (1 << 5)
#define CR4_OSFXSR (1 << 9)
#define CR4_OSXMMEXCPT (1 << 10)
#define MSR_EFER 0xc0000080
#define EFER_LME (1 << 8)

    .text
    .code16
    .globl smp_tramp_start, smp_tramp_end
smp_tramp_start:
    cli
    cld
    movw %cs, %ax
    movw %ax, %ds
    lgdtl tramp_gdt_desc - smp_tramp_start
    movl %cr0, %eax
    orl $CR0_PE, %eax
    movl %eax, %cr0
    ljmpl $0x08, $smp_ap_entry32
    .p2align 3
tramp_gdt_desc:
    .word smp_ap_gdt_end - smp_ap_gdt - 1
    .long smp_ap_gdt
smp_tramp_end:

    .code32
smp_ap_entry32:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    movl $(CR4_PAE | CR4_OSFXSR | CR4_OSXMMEXCPT), %eax
    movl %eax, %cr4
    movl smp_boot_cr3, %eax
    movl %eax, %cr3
    movl $MSR_EFER, %ecx
    rdmsr
    orl $EFER_LME, %eax
    wrmsr
    /* CR0 whole: after INIT it has CD and NW set (caches off). */
    movl $(CR0_PG | CR0_NE | CR0_ET | CR0_MP | CR0_PE), %eax
    movl %eax, %cr0
    ljmp $0x18, $smp_ap_entry64

    .code64
smp_ap_entry64:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    xorw %ax, %ax
    movw %ax, %fs
    movw %ax, %gs
    movq smp_boot_stack_step(%rip), %rsp
    lock xaddq %rsp, smp_boot_stack(%rip)
    xorl %ebp, %ebp
    fninit
    call smp_ap_main   /* kernel/smp.c, does not return */
1:  cli
    hlt
    jmp 1b

    .section .rodata
    .p2align 3
smp_ap_gdt:
    .quad 0
    .quad 0x00cf9a000000ffff /* 0x08: 32-bit code */
    .quad 0x00cf92000000ffff /* 0x10: data */
    .quad 0x00af9a000000ffff /* 0x18: 64-bit code */
smp_ap_gdt_end:

    .section .note.GNU-stack, "", @progbits
