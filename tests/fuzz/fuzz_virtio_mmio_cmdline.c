/* drivers/virtio/virtio_mmio_cmdline.c: the virtio_mmio.device= words of
 * a command line. Every word found lies in the line and starts with the
 * key; a parsed window has a size, does not wrap, and printed back in
 * hex parses to the same window. */
#include <errno.h>
#include <inttypes.h>

#include "drivers/virtio/virtio_mmio_cmdline.h"
#include "tests/fuzz/fuzz.h"

static void check_word(const char *w, size_t wlen)
{
    struct vm_word v;
    int rc = vm_word_parse(w, wlen, &v);
    FUZZ_CHECK(rc == 0 || rc == -EINVAL);
    if (rc)
        return;
    FUZZ_CHECK(v.size > 0 && v.base <= UINT64_MAX - (v.size - 1));
    char again[96];
    int n = snprintf(again, sizeof(again), VM_CMDLINE_KEY "%#" PRIx64 "@%#" PRIx64 ":%" PRIu32,
                     v.size, v.base, v.gsi);
    FUZZ_CHECK(n > 0 && (size_t)n < sizeof(again));
    struct vm_word r;
    FUZZ_CHECK(vm_word_parse(again, (size_t)n, &r) == 0);
    FUZZ_CHECK(r.base == v.base && r.size == v.size && r.gsi == v.gsi);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n > 4096)
        return 0;
    char *line = malloc(n ? n : 1); /* exactly n bytes: ASan sees a read past */
    if (!line)
        abort();
    memcpy(line, data, n);
    size_t pos = 0, wlen, last = 0;
    const char *w;
    while (vm_cmdline_next(line, n, &pos, &w, &wlen)) {
        FUZZ_CHECK(w >= line + last && w + wlen == line + pos && pos <= n);
        FUZZ_CHECK(wlen > sizeof(VM_CMDLINE_KEY) - 1 && !memchr(w, ' ', wlen));
        FUZZ_CHECK(memcmp(w, VM_CMDLINE_KEY, sizeof(VM_CMDLINE_KEY) - 1) == 0);
        FUZZ_CHECK(pos == n || line[pos] == ' ');
        check_word(w, wlen);
        last = pos;
    }
    FUZZ_CHECK(pos == n);
    free(line);
    return 0;
}
