/* app=reneg's uso=: in each set that negotiated VIRTIO_NET_F_HOST_USO
 * (and CSUM), after the set's frames, count= UDP datagrams of
 * RENEG_USO_PAYLOAD bytes that the device cuts into segments of uso=
 * payload bytes (virtio 1.2 s5.1.6.2, gso_type UDP_L4; gen's uso=,
 * apps/gen_uso.h). Each segment's payload starts with its own vnperf
 * payload header (net/pkt.h, docs/peer.md) on stream id set index +
 * RENEG_USO_STREAM, so every segment the host's stack delivers is a
 * stamped datagram of its own, counted per set (docs/apps.md, reneg).
 * Pure: tests/unit/test_reneg_uso.c. */
#ifndef VN_RENEG_USO_H
#define VN_RENEG_USO_H

#include <stdint.h>

/* A set's USO segments' stream id: the set's index plus this, apart from
 * the set's frames (stream id = the index) that the host peer reflects. */
#define RENEG_USO_STREAM 0x100u
/* The datagram's UDP payload before its last piece is fitted: a frame
 * within PKT_MAX_FRAME. */
#define RENEG_USO_PAYLOAD 8192u

/* The UDP payload of one datagram cut into uso-byte segments:
 * RENEG_USO_PAYLOAD less a last piece shorter than the payload header
 * (PL_LEN), so each segment holds a whole header; 0 when uso is below
 * PL_LEN or leaves fewer than two segments (uso above 8168). */
uint32_t reneg_uso_payload(uint16_t uso);

/* Writes the payload header at the start of each uso-byte segment of the
 * len-byte UDP payload at p (offsets 0, uso, 2 uso, ...): sequence
 * numbers seq, seq + 1, ..., timestamp tsc, stream id, magic. Returns the
 * segments stamped; len is one reneg_uso_payload gave. */
uint32_t reneg_uso_stamp(uint8_t *p, uint32_t len, uint16_t uso, uint32_t stream, uint64_t seq,
                         uint64_t tsc);

#endif
