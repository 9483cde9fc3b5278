#include "apps/qstats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/io.h"
#include "kernel/json.h"

void qstats_plan(struct qstats_plan *p, unsigned pairs, unsigned up)
{
    memset(p, 0, sizeof(*p));
    p->npairs = pairs < 1 ? 1 : pairs > VNET_MAX_PAIRS ? VNET_MAX_PAIRS : pairs;
    p->ncpu = up < 1 ? 1 : up < p->npairs ? up : p->npairs;
    for (unsigned q = 0; q < p->npairs; q++)
        p->cpu_of[q] = (uint8_t)(q % p->ncpu);
}

int qstats_init(struct qstats *q, unsigned queue, unsigned cpu, unsigned nstreams)
{
    memset(q, 0, sizeof(*q));
    q->queue = queue;
    q->cpu = cpu;
    q->streams = calloc(nstreams ? nstreams : 1, sizeof(*q->streams));
    if (!q->streams)
        return -ENOMEM;
    q->nstreams = nstreams;
    return 0;
}

void qstats_rx_add(struct qstats_rx *t, const struct qstats_rx *w)
{
    t->wire_rx += w->wire_rx;
    t->wire_rx_bytes += w->wire_rx_bytes;
    for (int i = 0; i < PKT_KINDS; i++)
        t->kinds[i] += w->kinds[i];
    if (w->first && (!t->first || w->first < t->first))
        t->first = w->first;
    if (w->last > t->last)
        t->last = w->last;
}

uint64_t qstats_rx_malformed(const struct qstats_rx *w)
{
    return w->kinds[PKT_BAD_LEN] + w->kinds[PKT_BAD_HDR] + w->kinds[PKT_BAD_CSUM];
}

void qstats_rx_kinds_json(struct json *j, const struct qstats_rx *w)
{
    json_obj_begin(j, "rx_kinds");
    for (int k = 0; k < PKT_KINDS; k++)
        json_u64(j, pkt_kind_name((enum pkt_kind)k), w->kinds[k]);
    json_obj_end(j);
}

uint64_t qstats_packets_now(const struct qstats *q, unsigned n, uint64_t *bytes)
{
    uint64_t packets = 0;
    *bytes = 0;
    for (unsigned i = 0; i < n; i++) {
        packets += VN_READ_ONCE(q[i].packets);
        *bytes += VN_READ_ONCE(q[i].bytes);
    }
    return packets;
}

void qstats_sum(const struct qstats *q, unsigned n, struct qstats_total *t)
{
    memset(t, 0, sizeof(*t));
    for (unsigned i = 0; i < n; i++) {
        struct seq_totals s;
        seq_sum(q[i].streams, q[i].nstreams, &s);
        t->packets += q[i].packets;
        t->bytes += q[i].bytes;
        t->no_header += q[i].no_header;
        t->bad_stream += q[i].bad_stream;
        t->not_ours += q[i].not_ours;
        t->tx_dropped += q[i].tx_dropped;
        t->seq.streams += s.streams;
        t->seq.unique += s.unique;
        t->seq.dup += s.dup;
        t->seq.reorder += s.reorder;
        t->seq.stale += s.stale;
        t->seq.lost += s.lost;
    }
}

void qstats_seq_json(struct json *j, const struct seq_totals *t)
{
    json_u64(j, "lost", t->lost);
    json_u64(j, "dup", t->dup);
    json_u64(j, "reorder", t->reorder);
    json_u64(j, "stale", t->stale);
}

void qstats_json(struct json *j, const struct qstats *q, unsigned n, qstats_more_fn more, void *ctx)
{
    json_arr_begin(j, "queues");
    for (unsigned i = 0; i < n; i++) {
        struct seq_totals s;
        seq_sum(q[i].streams, q[i].nstreams, &s);
        json_obj_begin(j, NULL);
        json_u64(j, "queue", q[i].queue);
        json_u64(j, "cpu", q[i].cpu);
        json_u64(j, "packets", q[i].packets);
        json_u64(j, "bytes", q[i].bytes);
        json_u64(j, "streams", s.streams);
        json_u64(j, "unique", s.unique);
        qstats_seq_json(j, &s);
        json_u64(j, "no_header", q[i].no_header);
        json_u64(j, "bad_stream", q[i].bad_stream);
        json_u64(j, "not_ours", q[i].not_ours);
        if (more)
            more(j, &q[i], ctx);
        json_obj_end(j);
    }
    json_arr_end(j);
}
