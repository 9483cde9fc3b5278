/* QEMU's own floor for boot time (bench/boot_time.py): the smallest PVH
 * image QEMU -kernel boots. Its 32-bit entry writes vnperf's "ready" and
 * "exit" lines to COM1 and leaves through isa-debug-exit, so the clock
 * that times vnperf's boot times QEMU's start, the PVH load and nothing
 * of ours. The APs of -smp N stay in reset, as QEMU leaves them. */

#include "boot/pvh_note.h"

#define COM1_THR 0x3f8
#define COM1_LSR 0x3fd /* bit 5: transmit holding register empty */
#define ISA_DEBUG_EXIT 0xf4

    PVH_NOTE(floor_entry32)

    .text
    .code32
    .globl floor_entry32
floor_entry32:
    cli
    movl $lines, %esi
next:
    movb (%esi), %al
    testb %al, %al
    jz done
    movw $COM1_LSR, %dx
wait:
    inb %dx, %al
    testb $0x20, %al
    jz wait
    movb (%esi), %al
    movw $COM1_THR, %dx
    outb %al, %dx
    incl %esi
    jmp next
done:
    /* QEMU leaves with (0 << 1) | 1: the runner's guest code 0 */
    xorl %eax, %eax
    movw $ISA_DEBUG_EXIT, %dx
    outl %eax, %dx
halt:
    hlt
    jmp halt

    .section .rodata
lines:
    .ascii "@vnperf {\"type\":\"ready\",\"app\":\"floor\",\"t_ns\":0}\n"
    .ascii "@vnperf {\"type\":\"exit\",\"code\":0,\"reason\":\"ok\"}\n"
    .byte 0

    .section .note.GNU-stack, "", @progbits
