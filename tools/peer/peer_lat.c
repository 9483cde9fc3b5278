/* One-way latency from this host's TSC stamps (count --latency). */
#include "tools/peer/peer_lat.h"

void peer_lat_start(struct peer_lat *l, uint64_t tsc, uint64_t ns)
{
    hist_init(&l->h);
    l->future = 0;
    l->tsc0 = tsc;
    l->ns0 = ns;
}

double peer_lat_tsc_hz(const struct peer_lat *l, uint64_t tsc, uint64_t ns)
{
    if (ns <= l->ns0 || tsc <= l->tsc0)
        return 0;
    return (double)(tsc - l->tsc0) * 1e9 / (double)(ns - l->ns0);
}

static double us(uint64_t cycles, double hz)
{
    return hz > 0 ? (double)cycles * 1e6 / hz : 0;
}

void peer_lat_json(FILE *f, const struct peer_lat *l, uint64_t tsc, uint64_t ns)
{
    double hz = peer_lat_tsc_hz(l, tsc, ns);
    const struct hist *h = &l->h;

    fprintf(f,
            ",\"latency\":{\"count\":%llu,\"future\":%llu,\"tsc_hz\":%.0f,\"min_us\":%.3f,"
            "\"p50_us\":%.3f,\"p90_us\":%.3f,\"p99_us\":%.3f,\"p999_us\":%.3f,\"max_us\":%.3f}",
            (unsigned long long)h->count, (unsigned long long)l->future, hz,
            us(h->count ? h->min : 0, hz), us(hist_quantile(h, 0.5), hz),
            us(hist_quantile(h, 0.9), hz), us(hist_quantile(h, 0.99), hz),
            us(hist_quantile(h, 0.999), hz), us(h->max, hz));
}
