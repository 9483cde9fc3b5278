/* Exception entry stubs: vectors 0-31 push a vector number (and a zero
 * error code where the CPU pushes none), save every register and call
 * trap_handler(struct trap_frame *) in kernel/trap.c, which never returns.
 *
 * Interrupt entry stubs: vectors 32-255 push their number, save the
 * registers a C function may clobber and call irq_dispatch(vector) in
 * kernel/irq.c, then return to the interrupted code. SSE registers are
 * not saved: irq.c is built with -mgeneral-regs-only. */

.macro TRAP_NOERR n
    .globl trap_stub_\n
trap_stub_\n:
    pushq $0
    pushq $\n
    jmp trap_common
.endm
.macro TRAP_ERR n
    .globl trap_stub_\n
trap_stub_\n:
    pushq $\n
    jmp trap_common
.endm

    .text
TRAP_NOERR 0
TRAP_NOERR 1
TRAP_NOERR 2
TRAP_NOERR 3
TRAP_NOERR 4
TRAP_NOERR 5
TRAP_NOERR 6
TRAP_NOERR 7
TRAP_ERR   8
TRAP_NOERR 9
TRAP_ERR   10
TRAP_ERR   11
TRAP_ERR   12
TRAP_ERR   13
TRAP_ERR   14
TRAP_NOERR 15
TRAP_NOERR 16
TRAP_ERR   17
TRAP_NOERR 18
TRAP_NOERR 19
TRAP_NOERR 20
TRAP_ERR   21
TRAP_NOERR 22
TRAP_NOERR 23
TRAP_NOERR 24
TRAP_NOERR 25
TRAP_NOERR 26
TRAP_NOERR 27
TRAP_NOERR 28
TRAP_ERR   29
TRAP_ERR   30
TRAP_NOERR 31

trap_common:
    pushq %rax
    pushq %rbx
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %rbp
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, %rdi
    andq $~15, %rsp
    call trap_handler
1:  hlt
    jmp 1b

/* 16 bytes apart (boot/cpu.c IRQ_STUB_BYTES), so the IDT can be filled
 * from irq_stub_32 on: a push imm32 and a jmp rel32 are 10 at most. */
    .p2align 4
    .globl irq_stub_32
irq_stub_32:
    .set vec, 32
    .rept 224
    .p2align 4
    pushq $vec
    jmp irq_common
    .set vec, vec + 1
    .endr

/* On entry the CPU aligned the stack to 16 and pushed 5 words; with the
 * vector and 9 registers below, one more word aligns the call. */
irq_common:
    pushq %rax
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    movq 72(%rsp), %rdi
    subq $8, %rsp
    cld
    call irq_dispatch
    addq $8, %rsp
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rax
    addq $8, %rsp
    iretq

    .section .rodata
    .p2align 3
    .globl trap_stubs
trap_stubs:
    .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
    .quad trap_stub_\n
    .endr

    .section .note.GNU-stack, "", @progbits
