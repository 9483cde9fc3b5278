/* app=reneg's stream_s=: before each set's frames, one TCP stream of app
 * iperf's client (one session, msg_size=) to dst_ip= port 5001 for
 * stream_s seconds, closed, and what the host acknowledged counted: the
 * set's lwIP traffic with the offloads it negotiated (docs/apps.md). */
#ifndef VN_RENEG_STREAM_H
#define VN_RENEG_STREAM_H

#include <stdbool.h>
#include <stdint.h>

struct app_config;
struct json;

struct reneg_stream {
    uint64_t bytes;   /* acknowledged by the host */
    uint64_t ns;      /* connect to the last acknowledgement */
    uint64_t unacked; /* still lwIP's after the drain: the host may have any part */
    uint16_t lport;   /* its local port: the host's iperf reports each stream by it */
    bool ok;          /* connected, moved bytes, not lost */
};

/* The driver's offloads app=reneg asks for: app iperf's (every one lwIP
 * handles) with stream_s=, none without. */
unsigned reneg_stream_offloads(const struct app_config *c);

/* One stream of c->stream_s seconds (the config table bounds it); a
 * connect refused for IPERF_CONNECT_S ends the run (exit 9). */
void reneg_stream_run(const struct app_config *c, struct reneg_stream *out);

/* out as the set's "tcp" object in j ("stream" is its frames' stream id). */
void reneg_stream_json(struct json *j, const struct reneg_stream *out);

#endif
