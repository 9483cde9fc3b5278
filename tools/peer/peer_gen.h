/* send --stream-file: the stream file's rx streams (host peer to guest,
 * docs/streams.md "Both ways"), sent with the guest's own stream engine
 * (apps/stream_spec.c reads the file, apps/stream_frame.c builds each
 * frame, apps/stream_sched.c says whose is due): the same templates,
 * field engine, sizes, stamp and rates as gen's, on CLOCK_MONOTONIC
 * nanoseconds instead of the TSC. Pure: the clock is the caller's
 * (tests/unit/test_peer_gen.c). */
#ifndef PEER_GEN_H
#define PEER_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "apps/stream_frame.h"
#include "apps/stream_sched.h"
#include "apps/stream_size.h"

/* One rx stream as the peer sends it. */
struct peer_gen_stream {
    uint32_t id; /* its index in the file: the stamp's stream id */
    struct stream_spec spec;
    struct stream_tmpl t;
    uint8_t *master;
    struct stream_fe fe[STREAM_VARS_MAX];
    struct stream_size sz;
    uint64_t seq, rng;
    uint64_t packets, bytes;
};

struct peer_gen {
    struct peer_gen_stream s[STREAMS_MAX];
    unsigned n;
    uint16_t maxlen; /* of every stream's frames */
    struct sched sc;
};

/* Reads the file's text (the encoding the guest gets, "vnperf-streams
 * 1") and builds its rx streams' templates, the addresses a stream does
 * not give from d (the peer's own as the source, the guest's as the
 * destination). 0, or -EINVAL / -ENOMEM with one line in why (a file
 * without an rx stream too). */
int peer_gen_load(struct peer_gen *g, const char *text, const struct stream_addrs *d, char *why,
                  size_t whylen);

/* Starts the scheduler at now (ns): 0, or -EINVAL. */
int peer_gen_start(struct peer_gen *g, uint64_t now, uint64_t seed);

/* The index of the stream whose frame is due at now, or -1. */
int peer_gen_pick(struct peer_gen *g, uint64_t now);

/* Stream k's next frame into f (maxlen bytes), stamped tsc: its length. */
uint16_t peer_gen_frame(struct peer_gen *g, unsigned k, uint8_t *f, uint64_t now, uint64_t tsc);

/* When the next frame is due (UINT64_MAX: every stream is done). */
uint64_t peer_gen_next(const struct peer_gen *g);

/* Every stream done (bursts only end). */
bool peer_gen_done(const struct peer_gen *g);

/* ,"streams":[{"id":..,"packets":..,"bytes":..,"next_seq":..}, ...] */
void peer_gen_json(FILE *f, const struct peer_gen *g);

void peer_gen_free(struct peer_gen *g);

#endif
