/* What every traffic app shares: run limits from count=/duration=, the
 * per-interval "sample" lines and the final "result" line with the
 * driver's and lwIP's counters. */
#ifndef VN_APPS_COMMON_H
#define VN_APPS_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/json.h"

struct app_config;

/* Per-interval samples (interval_ms=): rates over the last interval. */
struct meter {
    const char *app;   /* app=, named in each sample */
    uint64_t t0;       /* cycles at the start of the run */
    uint64_t next;     /* cycles of the next sample */
    uint64_t interval; /* cycles */
    uint64_t last_cyc, last_packets, last_bytes;
    uint64_t span_ns;  /* the interval of the last sample */
    uint64_t t_sample; /* cycles when the open sample line began */
};

struct stall;

void meter_start(struct meter *m, const struct app_config *c);

static inline bool meter_due(const struct meter *m, uint64_t now)
{
    return now >= m->next;
}

/* Opens a "sample" line with t (s since the start), packets, bytes and
 * their pps/bps over the interval; add members, then result_end(). */
struct json *meter_sample(struct meter *m, uint64_t now, uint64_t packets, uint64_t bytes);

/* Ends the sample line (result_end) and counts the time it took, console
 * output under TCG, as st's own pause, not a stall (apps/stall.h). */
void meter_end(struct meter *m, struct stall *st);

/* Starts st's stall accounting now, at STALL_THRESHOLD_US. */
void app_stall_start(struct stall *st);

/* Run limit: duration= seconds (0: def_s, 0 for none) as an absolute
 * cycle count; UINT64_MAX when unlimited. */
uint64_t app_deadline(const struct app_config *c, uint64_t start, uint64_t def_s);

/* Opens the "result" line: app, packets, bytes, pps, bps, duration_ns.
 * Add app members, then app_result_end(). */
struct json *app_result_begin(const struct app_config *c, uint64_t packets, uint64_t bytes,
                              uint64_t duration_ns);

/* Adds what went over the wire, for comparison with the host's counts:
 * tx_packets/tx_bytes (the app's own frames plus lwIP's: ARP, ICMP
 * answers) and rx_packets/rx_bytes (every frame the driver delivered). */
void app_wire_json(struct json *j, uint64_t tx_packets, uint64_t tx_bytes, uint64_t rx_packets,
                   uint64_t rx_bytes);

/* Adds "vnet" (first device; "vnet1".. for the others) and "net" (this
 * layer's and lwIP's counters), prints the line. */
void app_result_end(struct json *j);

/* Memory in use (object "mem"): malloc's bytes, the sbrk top, DMA pages,
 * the arena left, TX frames in flight and lwIP's pools. In every sample
 * and result, so drift over a long run shows (make soak). */
void app_mem_json(struct json *j);

/* Rate helpers for results (the only divisions, once per line). */
double app_per_s(uint64_t n, uint64_t ns);

/* Cycles to nanoseconds for values that fit 64 bits after scaling. */
uint64_t app_cycles_ns(uint64_t c);

struct hist;

/* The histogram's buckets as "hist" lines before the result, so a host
 * merging several guests' latencies merges distributions, not
 * percentiles (docs/protocol.md). unit_ns: nanoseconds per recorded
 * unit. Nothing for an empty histogram. */
void app_hist_lines(const char *name, const struct hist *h, double unit_ns);

/* One human-readable summary line on the console. */
void app_summary(const char *what, uint64_t packets, uint64_t bytes, uint64_t ns);

#endif
