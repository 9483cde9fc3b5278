/* The driver's counters of one bring-up, kept apart from the device
 * (vnet.h, vnet_counts): a renegotiation zeroes the device's. */
#include "drivers/virtio/vnet_priv.h"
#include "kernel/json.h"

static uint64_t vnet_rule_breaks(const struct virtq *vq)
{
    const struct virtq_stats *st = virtq_stats(vq);
    uint64_t n = 0;
    for (unsigned k = 0; k < VIRTQ_BAD_N; k++)
        n += st->bad[k];
    return n;
}

static void vnet_counts_tx(const struct vnet_txq *q, struct vnet_counts *c)
{
    const struct virtq_stats *v = virtq_stats(q->vq);
    c->tx_packets += q->st.packets;
    c->tx_bytes += q->st.bytes;
    c->tx_kicks += v->kicks;
    c->tx_kicks_suppressed += v->kicks_suppressed;
    c->tx_ring_full += q->st.ring_full;
    c->tx_len_mismatch += v->len_mismatch;
    c->rule_breaks += vnet_rule_breaks(q->vq);
}

static void vnet_counts_rx(const struct vnet_rxq *q, struct vnet_counts *c)
{
    const struct virtq_stats *v = virtq_stats(q->vq);
    c->rx_packets += q->st.packets;
    c->rx_bytes += q->st.bytes;
    c->rx_kicks += v->kicks;
    c->rx_kicks_suppressed += v->kicks_suppressed;
    c->rx_refilled += q->st.refilled;
    c->rx_len_errors += q->st.len_errors;
    for (unsigned i = 1; i < VNET_HDR_NBAD; i++)
        if (i != VNET_HDR_BAD_LEN) /* counted in len_errors */
            c->rx_bad_hdr += q->st.bad_hdr[i];
    c->rule_breaks += vnet_rule_breaks(q->vq);
}

void vnet_counts(const struct vnet_dev *d, struct vnet_counts *c)
{
    *c = (struct vnet_counts){.broken = vnet_broken(d) != 0};
    for (unsigned i = 0; i < d->npairs; i++) {
        vnet_counts_tx(&d->txq[i], c);
        vnet_counts_rx(&d->rxq[i], c);
    }
}

void vnet_counts_json(struct json *j, const char *key, const struct vnet_counts *c)
{
    json_obj_begin(j, key);
    json_obj_begin(j, "tx");
    json_u64(j, "packets", c->tx_packets);
    json_u64(j, "bytes", c->tx_bytes);
    json_u64(j, "kicks", c->tx_kicks);
    json_u64(j, "kicks_suppressed", c->tx_kicks_suppressed);
    json_u64(j, "ring_full", c->tx_ring_full);
    json_u64(j, "len_mismatch", c->tx_len_mismatch);
    json_obj_end(j);
    json_obj_begin(j, "rx");
    json_u64(j, "packets", c->rx_packets);
    json_u64(j, "bytes", c->rx_bytes);
    json_u64(j, "kicks", c->rx_kicks);
    json_u64(j, "kicks_suppressed", c->rx_kicks_suppressed);
    json_u64(j, "refilled", c->rx_refilled);
    json_u64(j, "len_errors", c->rx_len_errors);
    json_u64(j, "bad_hdr", c->rx_bad_hdr);
    json_obj_end(j);
    json_u64(j, "rule_breaks", c->rule_breaks);
    json_bool(j, "broken", c->broken);
    json_obj_end(j);
}
