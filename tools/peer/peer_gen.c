#include "tools/peer/peer_gen.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NS_HZ 1000000000ull

/* Stream id's template and walks. */
static int stream_build(struct peer_gen_stream *s, const struct stream_spec *p, uint32_t id,
                        const struct stream_addrs *d)
{
    uint16_t len = stream_size_max(p);
    /* The template writes the whole stamp, a 60-byte frame's too (its
     * short header holds the id's low 16 bits): room for it. */
    unsigned room = stream_spec_hdr_len(p) + PL_LEN;
    uint32_t varies = 0;
    s->id = id;
    s->spec = *p;
    s->master = calloc(1, len > room ? len : room);
    if (!s->master || stream_size_init(&s->sz, p) < 0)
        return -ENOMEM;
    for (unsigned k = 0; k < p->nvars; k++)
        varies |= 1u << p->var[k].field;
    if (stream_tmpl_build(s->master, len, p, d, id, varies, &s->t) < 0)
        return -EINVAL;
    for (unsigned k = 0; k < p->nvars; k++)
        stream_fe_init(&s->fe[k], &p->var[k], &s->t);
    return 0;
}

int peer_gen_load(struct peer_gen *g, const char *text, const struct stream_addrs *d, char *why,
                  size_t whylen)
{
    static struct stream_spec all[STREAMS_MAX];
    unsigned n;
    memset(g, 0, sizeof(*g));
    if (stream_spec_parse(text, all, &n, why, whylen) < 0)
        return -EINVAL;
    for (unsigned i = 0; i < n; i++) {
        if (all[i].dir != SDIR_RX)
            continue;
        struct peer_gen_stream *s = &g->s[g->n++];
        int rc = stream_build(s, &all[i], i, d);
        if (rc < 0) {
            snprintf(why, whylen, "stream %u: %s", i,
                     rc == -ENOMEM ? "out of memory" : "no frame holds its headers");
            return rc;
        }
        g->maxlen = s->t.len > g->maxlen ? s->t.len : g->maxlen;
    }
    if (!g->n) {
        snprintf(why, whylen, "streams: no rx stream (the peer sends dir=rx streams)");
        return -EINVAL;
    }
    return 0;
}

int peer_gen_start(struct peer_gen *g, uint64_t now, uint64_t seed)
{
    static struct stream_spec specs[STREAMS_MAX];
    for (unsigned k = 0; k < g->n; k++) {
        specs[k] = g->s[k].spec;
        g->s[k].rng = (seed + k) * 0x9e3779b97f4a7c15ull + 7;
    }
    return sched_init(&g->sc, specs, g->n, NS_HZ, now, seed);
}

int peer_gen_pick(struct peer_gen *g, uint64_t now)
{
    return sched_pick(&g->sc, now);
}

uint16_t peer_gen_frame(struct peer_gen *g, unsigned k, uint8_t *f, uint64_t now, uint64_t tsc)
{
    struct peer_gen_stream *s = &g->s[k];
    uint32_t udp = s->t.udp_base, ip = s->t.ip_base;
    memcpy(f, s->master, s->t.len);
    for (unsigned v = 0; v < s->spec.nvars; v++)
        stream_fe_apply(&s->fe[v], f, &s->t, &s->rng, &udp, &ip);
    uint16_t len = stream_size_next(&s->sz, &s->spec, s->t.size_varies);
    stream_frame_finish(f, &s->t, len, udp, ip, s->seq++, tsc);
    sched_sent(&g->sc, k, len, now);
    s->packets++;
    s->bytes += len;
    return len;
}

uint64_t peer_gen_next(const struct peer_gen *g)
{
    return sched_next(&g->sc);
}

bool peer_gen_done(const struct peer_gen *g)
{
    return sched_done(&g->sc);
}

void peer_gen_json(FILE *f, const struct peer_gen *g)
{
    fputs(",\"streams\":[", f);
    for (unsigned k = 0; k < g->n; k++)
        fprintf(f, "%s{\"id\":%u,\"packets\":%llu,\"bytes\":%llu,\"next_seq\":%llu}", k ? "," : "",
                g->s[k].id, (unsigned long long)g->s[k].packets, (unsigned long long)g->s[k].bytes,
                (unsigned long long)g->s[k].seq);
    fputc(']', f);
}

void peer_gen_free(struct peer_gen *g)
{
    for (unsigned k = 0; k < g->n; k++) {
        free(g->s[k].master);
        free(g->s[k].sz.seq);
    }
}
