/* gen's streams (docs/streams.md): the stream file the runner put in
 * fw_cfg (opt/vnperf/streams), each stream's template, field engine,
 * size walk, sequence numbers and counts, and the scheduler that says
 * whose frame goes next; the config line's shorthand is one such stream
 * (its flows= a flow var, apps/stream_flows.h). app_gen.c's send loop
 * reserves TX slots and gen_streams_burst fills them: each slot keeps its
 * stream's template while the stream's frames follow, and per frame the
 * engine writes what varies. */
#ifndef VN_GEN_STREAMS_H
#define VN_GEN_STREAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "apps/app_config.h"
#include "apps/stream_flows.h"
#include "apps/stream_frame.h"
#include "drivers/virtio/vnet.h"
#include "kernel/json.h"

/* Reads and parses the stream file: false when there is none; a bad one
 * ends the run (config error, the parser's line). gen sends the tx
 * streams and counts every stream's frames; a file of rx streams only
 * has it receive only (gen_streams_setup's 0). */
bool gen_streams_load(void);

/* The config line's shorthand (size=, imix=, rate=, flows=) as the one
 * stream s (docs/streams.md): gen sends it through the same engine, the
 * n flows of flows= (flows_expand's, kept by the caller) its flow var's
 * values when above one (apps/stream_flows.h). */
void gen_streams_one(const struct stream_spec *s, const struct pkt_flow *flows, unsigned n);

/* The file's stream ids, tx and rx: frames of higher ids are not ours. */
unsigned gen_streams_ids(void);

/* Builds every tx stream's template (defaults from d), CPU 0's to send;
 * the count of tx streams (0: the file's are rx streams only). */
unsigned gen_streams_setup(const struct stream_addrs *d);

/* The shorthand's stream with its UDP checksum finished by the device
 * (uso=, docs/apps.md): its template (*len bytes), for the driver to
 * seed the checksum field of before anything is sent. */
uint8_t *gen_streams_l4_dev(uint16_t *len);

/* The shorthand's stream sent by CPU cpu at rate r, its share of rate=
 * (cpu 0 included): another CPU's a copy of CPU 0's stream. */
void gen_streams_share(unsigned cpu, const struct rate *r);

/* Starts CPU cpu's scheduler at now: 0, or -EINVAL when a rate cannot be
 * paced at tsc_hz. */
int gen_streams_start(unsigned cpu, uint64_t tsc_hz, uint64_t seed, uint64_t now);

/* The largest frame of every stream. */
uint16_t gen_streams_maxlen(void);

/* CPU cpu's frames that are due, at most max (and left), into the k
 * reserved slots of sl from first on, each slot given its stream's
 * template when it held another's (tags: the stream's index + 1), then
 * the field engine's values (the flow var's from w, the flows of sl's
 * pair), the length, the stamp, the checksums; lens[] and *bytes theirs.
 * With drop, due frames beyond k are *dropped: they take their sequence
 * numbers, the receiver sees the loss. Returns how many were written. */
int gen_streams_burst(unsigned cpu, struct stream_flow_walk *w, struct vnet_txslots *sl,
                      uint16_t first, int k, int max, uint64_t left, bool drop, uint64_t now,
                      uint16_t *lens, uint64_t *bytes, int *dropped);
/* A frame of stream id reached gen (len bytes): a tx stream's came back
 * (a reflector's answer), an rx stream's the host peer sent. Its sequence
 * number into the stream's loss, duplicates and reordering; a tx stream's
 * stamp ts into its latency (an rx stream's is the host's TSC). */
void gen_streams_return(unsigned id, uint64_t seq, uint64_t ts, uint32_t len, uint64_t now);

/* When CPU cpu's next frame is due (UINT64_MAX: every stream is done). */
uint64_t gen_streams_next(unsigned cpu);
bool gen_streams_done(unsigned cpu);

/* Stream i's frames sent of its k-th size (its spec's sizes; a range's
 * are not told apart: 0), every CPU's. */
uint64_t gen_streams_size_packets(unsigned i, unsigned k);

/* "streams": per stream its counts and rate. */
void gen_streams_json(struct json *j, uint64_t ns);

#endif
