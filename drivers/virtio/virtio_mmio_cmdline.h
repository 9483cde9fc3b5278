/* The virtio_mmio.device=<size>@<base>:<irq>[:<id>] words of the kernel
 * command line (Linux's Documentation/admin-guide/kernel-parameters.txt,
 * the form QEMU's -M microvm writes). Pure parsing, fuzzed on the host. */
#ifndef VN_VIRTIO_MMIO_CMDLINE_H
#define VN_VIRTIO_MMIO_CMDLINE_H

#include <stddef.h>
#include <stdint.h>

#define VM_CMDLINE_KEY "virtio_mmio.device="

struct vm_word {
    uint64_t base, size; /* a window that does not wrap, size > 0 */
    uint32_t gsi;
};

/* The next space-separated word of line[0..len) at or after *pos that
 * starts with VM_CMDLINE_KEY and has a value: sets *w and *wlen to the
 * whole word, moves *pos past it, and returns 1; 0 when none is left. */
int vm_cmdline_next(const char *line, size_t len, size_t *pos, const char **w, size_t *wlen);

/* One word (key included, wlen bytes, no NUL needed). Returns 0, or
 * -EINVAL for a malformed number, a size or base beyond 64 bits, a
 * window that wraps, or an interrupt beyond 32 bits. */
int vm_word_parse(const char *w, size_t wlen, struct vm_word *out);

#endif
