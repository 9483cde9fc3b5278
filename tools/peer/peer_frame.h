/* The peer's view of frames. Building, parsing and the vnperf payload come
 * from net/pkt.h, the guest's own code, so both ends always agree on the
 * wire format; this adds what only the peer needs. */
#ifndef PEER_FRAME_H
#define PEER_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/pkt.h"
#include "tools/peer/peer_flows.h"

/* pkt_parse's kinds plus two for UDP that is not vnperf. A PKT_UDP result
 * is a vnperf frame: a full header with the magic, or, in a 60..65-byte
 * frame, the short header (PL_MIN bytes, no magic, 16-bit stream id). */
#define PEER_KIND_UDP_SHORT PKT_KINDS       /* payload shorter than PL_MIN */
#define PEER_KIND_BAD_MAGIC (PKT_KINDS + 1) /* full-size payload without PL_MAGIC */
#define PEER_KINDS          (PKT_KINDS + 2)

struct peer_vnpf {
    uint64_t seq, tsc;
    uint32_t stream;
    struct peer_flow_key flow;
};

/* Classifies a received frame; for PKT_UDP fills v from the payload and
 * the flow from the headers. */
int peer_frame_classify(const uint8_t *f, size_t len, bool verify_udp_csum, struct peer_vnpf *v);

const char *peer_kind_name(int kind);

/* Turns a received frame around in place: MACs swapped; for a valid UDP
 * frame also the IP addresses (IPv4 or IPv6) and UDP ports (checksums
 * stay valid), a stream's TCP segment or ICMP echo request as the guest's
 * reflector answers it (pkt_stamped_reflect). -EINVAL for a frame shorter
 * than an Ethernet header. */
int peer_frame_reflect(uint8_t *f, size_t len);

/* Whether reflect sends a frame of kind (peer_frame_classify's) back:
 * every frame on a wire of its own (dgram, socket, vhost), only vnperf's
 * on an interface it shares with the host's stack (--rx-if), which gets
 * every frame too: the guest's ARP or its TCP to the host's iperf turned
 * round would reach the guest as noise (a TSO frame cut to a runt). */
bool peer_frame_turns_round(int kind, bool shared_if);

/* Whether a len-byte frame read on an interface whose frames are at most
 * frame_max bytes (peer_sock.frame_max; 0: not an interface) is a GSO
 * frame: the packet socket sees a tap's offloaded datagram (the guest's
 * uso=, VIRTIO_NET_F_HOST_USO) whole, before the host's stack cuts it,
 * its checksum unfinished. reflect leaves it to the stack, which delivers
 * the segments; it cannot go back (the interface's MTU refuses it). */
bool peer_frame_gso(size_t len, uint32_t frame_max);

#endif
