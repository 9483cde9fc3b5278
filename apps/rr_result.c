/* The rr result's common members (see rr_result.h). */
#include "apps/rr_result.h"

static double rr_result_us(const struct hist *h, double q)
{
    return h && h->count ? (double)hist_quantile(h, q) / 1e3 : 0;
}

void rr_result_json(struct json *j, const struct rr_result *r, double tps)
{
    const struct hist *h = r->lat;
    json_str(j, "role", r->server ? "server" : "client");
    json_str(j, "proto", r->tcp ? "tcp" : "udp");
    json_u64(j, "sessions", r->sessions);
    json_u64(j, "req_size", r->req_size);
    json_u64(j, "resp_size", r->resp_size);
    json_u64(j, "transactions", r->transactions);
    json_double(j, "tps", tps);
    json_u64(j, "timeouts", r->timeouts);
    json_u64(j, "late", r->late);
    json_u64(j, "unsent", r->unsent);
    json_double(j, "p50_us", rr_result_us(h, 0.5));
    json_double(j, "p90_us", rr_result_us(h, 0.9));
    json_double(j, "p99_us", rr_result_us(h, 0.99));
    json_double(j, "p999_us", rr_result_us(h, 0.999));
    json_double(j, "max_us", h && h->count ? (double)h->max / 1e3 : 0);
    json_double(j, "mean_us", h && h->count ? (double)h->sum / (double)h->count / 1e3 : 0);
}
