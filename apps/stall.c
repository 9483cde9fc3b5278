#include "apps/stall.h"

#include "kernel/json.h"

void stall_start(struct stall *s, uint64_t now, uint64_t threshold)
{
    *s = (struct stall){.t0 = now, .last = now, .threshold = threshold};
}

void stall_record(struct stall *s, uint64_t gap, uint64_t now)
{
    if ((int64_t)gap < 0)
        return;
    if (gap > s->max) {
        s->max = gap;
        s->max_at = now - s->t0;
    }
    if (gap > s->threshold) {
        s->over++;
        s->stalled += gap;
    }
    /* Below the threshold only a new maximum matters. */
    s->bar = s->max < s->threshold ? s->max : s->threshold;
}

void stall_pause(struct stall *s, uint64_t t0, uint64_t t1)
{
    if ((int64_t)(t1 - t0) < 0)
        return;
    s->last += t1 - t0;
    s->paused += t1 - t0;
    if (t1 - t0 > s->pause_max)
        s->pause_max = t1 - t0;
}

static double stall_scaled(uint64_t cycles, uint64_t tsc_hz, double unit)
{
    return (double)cycles / (double)tsc_hz * unit;
}

void stall_json(struct json *j, const struct stall *s, uint64_t tsc_hz)
{
    json_obj_begin(j, "stalls");
    json_u64(j, "threshold_us", STALL_THRESHOLD_US);
    json_double(j, "max_us", stall_scaled(s->max, tsc_hz, 1e6));
    json_double(j, "max_at_s", stall_scaled(s->max_at, tsc_hz, 1.0));
    json_u64(j, "over_1ms", s->over);
    json_double(j, "stalled_ms", stall_scaled(s->stalled, tsc_hz, 1e3));
    json_double(j, "pause_max_us", stall_scaled(s->pause_max, tsc_hz, 1e6));
    json_double(j, "paused_ms", stall_scaled(s->paused, tsc_hz, 1e3));
    json_obj_end(j);
}
