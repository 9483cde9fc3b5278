/* The rr result's members both rr clients and the lwIP server write
 * (docs/protocol.md, app=rr): one writer, so the lwIP path (app_rr.c)
 * and the per-vCPU UDP client (rr_mq_client.c) cannot drift apart. */
#ifndef VN_RR_RESULT_H
#define VN_RR_RESULT_H

#include <stdbool.h>
#include <stdint.h>

#include "apps/hist.h"
#include "kernel/json.h"

struct rr_result {
    bool server, tcp;
    uint64_t sessions, req_size, resp_size;
    uint64_t transactions, timeouts, late, unsent;
    const struct hist *lat; /* ns; NULL where none is measured (a server) */
};

/* Writes role, proto, sessions, req_size, resp_size, transactions, tps,
 * timeouts, late, unsent and the latency quantiles in us (0 without lat
 * or with an empty one). */
void rr_result_json(struct json *j, const struct rr_result *r, double tps);

#endif
