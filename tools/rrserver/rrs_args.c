/* vnperf-rrserver command line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "tools/rrserver/rrs.h"

/* Decimal digits only: strtoul alone skips white space and takes a sign. */
static int num(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
    char *end;
    if (s[0] < '0' || s[0] > '9')
        return -1;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static int opt(const char *name, const char *val, struct rrs_opts *o, char *err, size_t errlen)
{
    uint32_t v;
    struct in6_addr a; /* room for either family */
    if (!strcmp(name, "--proto") && (!strcmp(val, "udp") || !strcmp(val, "tcp")))
        o->proto = val[0] == 'u' ? RRS_UDP : RRS_TCP;
    else if (!strcmp(name, "--bind") && inet_pton(AF_INET, val, &a) == 1)
        o->bind = val, o->family = AF_INET;
    else if (!strcmp(name, "--bind") && inet_pton(AF_INET6, val, &a) == 1)
        o->bind = val, o->family = AF_INET6;
    else if (!strcmp(name, "--port") && !num(val, 1, 65535, &v))
        o->port = (uint16_t)v;
    else if (!strcmp(name, "--req") && !num(val, 1, RRS_MSG_MAX, &v))
        o->req = v;
    else if (!strcmp(name, "--resp") && !num(val, 1, RRS_MSG_MAX, &v))
        o->resp = v;
    else if (!strcmp(name, "--ready-file") && val[0])
        o->ready_file = val;
    else {
        snprintf(err, errlen,
                 "bad option %s %s (usage: --proto udp|tcp --port 1..65535 "
                 "[--bind IPV4|IPV6] [--req 1..%d] [--resp 1..%d] [--ready-file PATH])",
                 name, val, RRS_MSG_MAX, RRS_MSG_MAX);
        return -1;
    }
    return 0;
}

int rrs_args(int argc, char **argv, struct rrs_opts *o, char *err, size_t errlen)
{
    *o = (struct rrs_opts){RRS_UDP, "0.0.0.0", 0, 1, 1, NULL, AF_INET};
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc) {
            snprintf(err, errlen, "option %s needs a value", argv[i]);
            return -1;
        }
        if (opt(argv[i], argv[i + 1], o, err, errlen))
            return -1;
    }
    if (!o->port) {
        snprintf(err, errlen, "--port is required");
        return -1;
    }
    return 0;
}
