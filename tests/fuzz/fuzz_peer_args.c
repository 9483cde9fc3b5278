/* tools/peer/peer_args.c: any argument vector (NUL-separated words). */
#include <errno.h>

#include "tests/fuzz/fuzz.h"
#include "tools/peer/peer_opts.h"

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n > 2048)
        return 0;
    char *buf = fuzz_cstr(data, n);
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "vnperf-peer";
    for (size_t i = 0; i <= n && argc < MAX_ARGS + 1;) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    argv[argc] = NULL;
    struct peer_opts o;
    char err[256];
    memset(err, 'x', sizeof(err));
    int rc = peer_args_parse(argc, argv, &o, err, sizeof(err));
    FUZZ_CHECK(rc == 0 || rc == PEER_ARGS_HELP || rc == -EINVAL);
    if (rc == -EINVAL)
        FUZZ_CHECK(fuzz_terminated(err, sizeof(err)) && err[0]);
    if (rc == 0) {
        FUZZ_CHECK(o.batch >= 1 && o.batch <= 256);
        FUZZ_CHECK(o.size >= PKT_MIN_FRAME && o.size <= PKT_MAX_FRAME);
    }
    free(buf);
    return 0;
}
