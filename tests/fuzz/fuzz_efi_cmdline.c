/* boot/efi/efi_cmdline.c: any load options, image path and buffer size.
 * A line it accepts is printable ASCII that fits, trimmed of spaces. */
#include <errno.h>

#include "boot/efi/efi_cmdline.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    static const uint16_t path[] = {'\\', 'E', 'F', 'I', '\\', 'B', 'O', 'O', 'T', '\\', 'v',
                                    'n',  'p', 'e', 'r', 'f',  '.', 'e', 'f', 'i', 0};
    if (n < 2 || n > 8192)
        return 0;
    size_t outlen = 1 + data[0] % 64 * 32; /* 1 .. 2017 */
    const uint16_t *ip = data[1] & 1 ? path : NULL;
    size_t bytes = n - 2;
    uint8_t *opts = malloc(bytes ? bytes : 1);
    char *out = malloc(outlen);
    if (!opts || !out)
        abort();
    memcpy(opts, data + 2, bytes);
    memset(out, 'x', outlen);
    int rc = efi_cmdline_convert(opts, bytes, ip, out, outlen);
    FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -E2BIG);
    FUZZ_CHECK(fuzz_terminated(out, outlen));
    size_t len = strlen(out);
    if (rc < 0) {
        FUZZ_CHECK(len == 0);
    } else {
        for (size_t i = 0; i < len; i++)
            FUZZ_CHECK(out[i] >= 0x20 && out[i] <= 0x7e);
        FUZZ_CHECK(len == 0 || (out[0] != ' ' && out[len - 1] != ' '));
        FUZZ_CHECK(len <= bytes / 2);
    }
    free(opts);
    free(out);
    return 0;
}
