/* tools/rrserver/rrs_args.c: any argument vector (NUL-separated words).
 * What it accepts is in range, and a number was written as one: decimal
 * digits only (strtoul alone also takes " 5", "+5"). */
#include <arpa/inet.h>

#include "tests/fuzz/fuzz.h"
#include "tools/rrserver/rrs.h"

#define MAX_ARGS 32

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

static void check_opts(int argc, char **argv, const struct rrs_opts *o)
{
    struct in6_addr a; /* room for either family */
    FUZZ_CHECK(o->proto == RRS_UDP || o->proto == RRS_TCP);
    FUZZ_CHECK(o->family == AF_INET || o->family == AF_INET6);
    FUZZ_CHECK(o->port >= 1 && inet_pton(o->family, o->bind, &a) == 1);
    FUZZ_CHECK(o->req >= 1 && o->req <= RRS_MSG_MAX && o->resp >= 1 && o->resp <= RRS_MSG_MAX);
    FUZZ_CHECK(!o->ready_file || o->ready_file[0]);
    FUZZ_CHECK(argc % 2 == 1);
    for (int i = 1; i + 1 < argc; i += 2)
        if (!strcmp(argv[i], "--port") || !strcmp(argv[i], "--req") || !strcmp(argv[i], "--resp"))
            FUZZ_CHECK(all_digits(argv[i + 1]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n > 1024)
        return 0;
    char *buf = fuzz_cstr(data, n);
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "vnperf-rrserver";
    for (size_t i = 0; i <= n && argc < MAX_ARGS + 1;) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    argv[argc] = NULL;
    struct rrs_opts o;
    char err[256];
    memset(err, 'x', sizeof(err));
    int rc = rrs_args(argc, argv, &o, err, sizeof(err));
    FUZZ_CHECK(rc == 0 || rc == -1);
    if (rc)
        FUZZ_CHECK(fuzz_terminated(err, sizeof(err)) && err[0]);
    else
        check_opts(argc, argv, &o);
    free(buf);
    return 0;
}
