/* The kernel ELF, embedded whole: efi_main.c parses and loads it. .rodata.*
 * lands in the image's .data section via GNU-EFI's linker script. */
    .section .rodata.vnperf_kernel, "a"
    .balign 16
    .global vnperf_kernel_start, vnperf_kernel_end
    .hidden vnperf_kernel_start, vnperf_kernel_end
vnperf_kernel_start:
    .incbin VNPERF_KERNEL
vnperf_kernel_end:

    .section .note.GNU-stack, "", @progbits
