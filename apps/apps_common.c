#include "apps/apps_common.h"

#include <stdio.h>

#include "apps/hist_json.h"
#include "apps/stall.h"
#include "apps/app_config.h"
#include "kernel/irq.h"
#include "kernel/mem.h"
#include "kernel/result.h"
#include "kernel/smp.h"
#include "kernel/time.h"
#include "net/net.h"

void meter_start(struct meter *m, const struct app_config *c)
{
    m->app = c->app;
    m->t0 = time_cycles();
    m->interval = time_ns_to_cycles(c->interval_ms * 1000000u);
    if (m->interval == 0)
        m->interval = time_tsc_hz;
    m->next = m->t0 + m->interval;
    m->last_cyc = m->t0;
    m->last_packets = m->last_bytes = 0;
    m->span_ns = 0;
}

double app_per_s(uint64_t n, uint64_t ns)
{
    return ns ? (double)n * 1e9 / (double)ns : 0.0;
}

uint64_t app_cycles_ns(uint64_t c)
{
    return time_cycles_to_ns(c);
}

struct json *meter_sample(struct meter *m, uint64_t now, uint64_t packets, uint64_t bytes)
{
    uint64_t ns = time_cycles_to_ns(now - m->last_cyc);
    uint64_t dp = packets - m->last_packets, db = bytes - m->last_bytes;
    m->t_sample = time_cycles();
    struct json *j = result_begin("sample");
    json_str(j, "app", m->app);
    json_double(j, "t", (double)time_cycles_to_ns(now - m->t0) / 1e9);
    json_u64(j, "packets", packets);
    json_u64(j, "bytes", bytes);
    json_double(j, "pps", app_per_s(dp, ns));
    json_double(j, "bps", app_per_s(db * 8, ns));
    app_mem_json(j);
    m->last_cyc = now;
    m->span_ns = ns;
    m->last_packets = packets;
    m->last_bytes = bytes;
    /* Skip samples missed during a stall instead of printing a burst. */
    while (m->next <= now)
        m->next += m->interval;
    return j;
}

void meter_end(struct meter *m, struct stall *st)
{
    result_end();
    stall_pause(st, m->t_sample, time_cycles());
}

void app_stall_start(struct stall *st)
{
    stall_start(st, time_cycles(), time_ns_to_cycles(STALL_THRESHOLD_US * 1000u));
}

uint64_t app_deadline(const struct app_config *c, uint64_t start, uint64_t def_s)
{
    uint64_t s = c->duration_s ? c->duration_s : def_s;
    return s ? start + s * time_tsc_hz : UINT64_MAX;
}

void app_mem_json(struct json *j)
{
    struct mem_stats ms;
    mem_get_stats(&ms);
    json_obj_begin(j, "mem");
    json_u64(j, "heap_in_use", ms.heap_in_use);
    json_u64(j, "heap_top", ms.heap_used);
    json_u64(j, "dma_bytes", ms.pages_used);
    json_u64(j, "arena_free", ms.free);
    json_u64(j, "tx_in_flight", net_tx_in_flight());
    net_pools_json(j);
    json_obj_end(j);
}

/* Each CPU's own halts ("cpus"): which vCPUs gave time back. */
static void app_idle_cpus_json(struct json *j)
{
    json_arr_begin(j, "cpus");
    for (unsigned k = 0; k < smp_cpus_up(); k++) {
        struct irq_idle_stats st;
        irq_idle_stats_cpu(k, &st);
        json_obj_begin(j, NULL);
        json_u64(j, "cpu", k);
        json_u64(j, "halts", st.halts);
        json_u64(j, "halted_ns", time_cycles_to_ns(st.halt_cycles));
        json_u64(j, "timer_late_ns", time_cycles_to_ns(st.timer_late_cycles));
        json_obj_end(j);
    }
    json_arr_end(j);
}

/* The guest's halts: how much of the app's run its vCPUs gave back to the
 * host. Over the whole run (every halt counts, also those before the first
 * frame or after the last), not the app's measured window; share is per
 * vCPU (the halted time of all over the window times the CPUs up), so it
 * stays within 0..1. */
static void app_idle_json(struct json *j)
{
    struct irq_idle_stats st;
    irq_idle_stats(&st);
    uint64_t ns = time_cycles_to_ns(st.halt_cycles);
    uint64_t window = time_cycles_to_ns(time_cycles() - time_app_start);
    json_obj_begin(j, "idle");
    json_u64(j, "halts", st.halts);
    json_u64(j, "halted_ns", ns);
    json_u64(j, "window_ns", window);
    double cpu_window = (double)window * (double)smp_cpus_up();
    json_double(j, "share", window ? (double)ns / cpu_window : 0.0);
    json_u64(j, "timer_late_ns", time_cycles_to_ns(st.timer_late_cycles));
    app_idle_cpus_json(j);
    json_obj_end(j);
}

struct json *app_result_begin(const struct app_config *c, uint64_t packets, uint64_t bytes,
                              uint64_t duration_ns)
{
    struct json *j = result_begin("result");
    json_str(j, "app", c->app);
    json_u64(j, "packets", packets);
    json_u64(j, "bytes", bytes);
    json_double(j, "pps", app_per_s(packets, duration_ns));
    json_double(j, "bps", app_per_s(bytes * 8, duration_ns));
    json_u64(j, "duration_ns", duration_ns);
    json_u64(j, "vcpus", smp_cpus_up());
    app_idle_json(j);
    return j;
}

void app_wire_json(struct json *j, uint64_t tx_packets, uint64_t tx_bytes, uint64_t rx_packets,
                   uint64_t rx_bytes)
{
    uint64_t lp, lb;
    net_lwip_sent(&lp, &lb);
    json_u64(j, "tx_packets", tx_packets + lp);
    json_u64(j, "tx_bytes", tx_bytes + lb);
    json_u64(j, "rx_packets", rx_packets);
    json_u64(j, "rx_bytes", rx_bytes);
}

void app_result_end(struct json *j)
{
    static const char *const names[VNET_MAX_DEVS] = {"vnet", "vnet1", "vnet2", "vnet3"};
    for (unsigned i = 0; i < net_if_count(); i++) {
        json_obj_begin(j, names[i]);
        vnet_stats_json(net_if_get(i)->dev, j);
        json_obj_end(j);
    }
    json_obj_begin(j, "net");
    net_stats_json(j);
    json_obj_end(j);
    app_mem_json(j);
    result_end();
}

void app_hist_lines(const char *name, const struct hist *h, double unit_ns)
{
    unsigned from = 0, part = 0;
    while (h->count && from < HIST_BUCKETS) {
        struct json *j = result_begin("hist");
        json_str(j, "name", name);
        json_double(j, "unit_ns", unit_ns);
        json_u64(j, "part", part++);
        if (from == 0) {
            json_u64(j, "count", h->count);
            json_u64(j, "min", h->min);
            json_u64(j, "max", h->max);
            json_u64(j, "sum", h->sum);
            json_u64(j, "sub_bits", HIST_SUB_BITS);
        }
        hist_json_buckets(j, h, &from);
        json_bool(j, "last", from >= HIST_BUCKETS);
        result_end();
    }
}

void app_summary(const char *what, uint64_t packets, uint64_t bytes, uint64_t ns)
{
    printf("%s: %llu packets, %llu bytes in %.3f s: %.3f Mpps, %.3f Gbit/s\n", what,
           (unsigned long long)packets, (unsigned long long)bytes, (double)ns / 1e9,
           app_per_s(packets, ns) / 1e6, app_per_s(bytes * 8, ns) / 1e9);
}
