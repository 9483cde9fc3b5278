/* gen's uso=: UDP datagrams larger than the MTU, each cut by the device
 * into segments of uso= payload bytes (VIRTIO_NET_F_HOST_USO, virtio 1.2
 * s5.1.6.2, gso_type UDP_L4; docs/apps.md). */
#ifndef VN_GEN_USO_H
#define VN_GEN_USO_H

#include <stdint.h>

#include "apps/app_config.h"

struct net_if;
struct json;

/* The offloads gen asks of the driver: checksum and UDP segmentation
 * with uso=, none without. */
unsigned gen_uso_offloads(const struct app_config *c);

/* The largest frame size= may give: past the MTU with uso=. */
uint32_t gen_uso_max_frame(const struct app_config *c, uint32_t mtu_frame);

/* Before the frames are built: exits with VN_EXIT_CONFIG (one line) when
 * uso= is asked of a device that did not negotiate HOST_USO, with a
 * segment larger than the MTU takes, or with more than one size or flow
 * (each frame's checksum field is the one pseudo-header sum). */
void gen_uso_check(const struct app_config *c, struct net_if *nif, unsigned nsizes,
                   unsigned nflows);

/* Exits with VN_EXIT_CONFIG (one line) when a segment of uso= payload
 * bytes is more than nif's MTU takes (gen_uso_check's part app reneg
 * shares, per set). */
void gen_uso_mtu_check(const struct app_config *c, struct net_if *nif);

/* Every bound pair q of nif sends with the USO header made for frame (the
 * template, its checksum field seeded here); exits on failure. */
void gen_uso_bind(struct net_if *nif, unsigned q, uint8_t *frame, uint16_t len, uint16_t uso);

/* Segments one datagram of a len-byte frame becomes: its UDP payload cut
 * into uso-byte pieces (1 without uso=). */
uint32_t gen_uso_segments(uint16_t len, uint16_t uso);

/* A datagram's shape as the open object's keys gso_size,
 * segments_per_datagram and last_segment (a len-byte frame cut at uso
 * bytes); returns the segments per datagram. */
uint32_t gen_uso_shape_json(struct json *j, uint16_t uso, uint16_t len);

/* The result's "uso" object: gso_size, segments per datagram, in all. */
void gen_uso_json(struct json *j, uint16_t uso, uint16_t len, uint64_t packets);

#endif
