/* virtio-net counters, parameters and features as JSON members. */
#include <errno.h>
#include <stdio.h>

#include "drivers/virtio/vnet_ctrl.h"
#include "drivers/virtio/vnet_priv.h"
#include "kernel/irq.h"
#include "kernel/json.h"

void vnet_features_json(struct json *j, const char *key, uint64_t f)
{
    json_arr_begin(j, key);
    char other[8];
    for (unsigned b = 0; b < 64; b++) {
        if (!(f & VIRTIO_BIT(b)))
            continue;
        const char *n = vnet_feature_name(b);
        if (!n) {
            snprintf(other, sizeof(other), "bit%u", b);
            n = other;
        }
        json_str(j, NULL, n);
    }
    json_arr_end(j);
}

uint64_t vnet_features(const struct vnet_dev *d)
{
    return d->features;
}

/* The broken queue (RX first), its name and what it recorded. */
static const struct virtq *vnet_broken_queue(const struct vnet_dev *d, const char **queue)
{
    const struct virtq *vq = NULL;
    const char *name = "rx";
    for (unsigned i = 0; i < d->npairs && !vq; i++) {
        if (virtq_broken(d->rxq[i].vq)) {
            vq = d->rxq[i].vq;
        } else if (virtq_broken(d->txq[i].vq)) {
            vq = d->txq[i].vq;
            name = "tx";
        }
    }
    *queue = d->fail_queue ? d->fail_queue : name;
    return vq;
}

int vnet_fault(const struct vnet_dev *d, struct vnet_fault *f)
{
    const char *queue;
    const struct virtq *vq = vnet_broken_queue(d, &queue);
    if (!vq)
        return -ENOENT;
    const struct virtq_violation *bad = virtq_violation(vq);
    *f = (struct vnet_fault){queue, bad ? bad->what : "broken", bad ? bad->id : 0,
                             bad ? bad->len : 0, bad ? bad->limit : 0};
    return 0;
}

static void vnet_json_violation(struct json *j, const struct vnet_dev *d)
{
    const char *queue;
    const struct virtq *vq = vnet_broken_queue(d, &queue);
    const struct virtq_violation *bad = virtq_violation(vq);
    json_obj_begin(j, "violation");
    json_str(j, "queue", queue);
    json_str(j, "what", bad ? bad->what : "broken");
    if (bad) {
        json_u64(j, "id", bad->id);
        json_u64(j, "len", bad->len);
        json_u64(j, "limit", bad->limit);
        json_u64(j, "device_used_idx", bad->dev_used_idx);
        json_u64(j, "driver_used_idx", bad->used_idx);
    }
    json_u64(j, "queue_size", virtq_size(vq));
    json_obj_end(j);
}

/* What both queues have: kicks, and whether the used ring broke. */
static void vnet_json_virtq(struct json *j, const struct virtq *vq)
{
    const struct virtq_stats *st = virtq_stats(vq);
    json_u64(j, "kicks", st->kicks);
    json_u64(j, "kicks_suppressed", st->kicks_suppressed);
    json_u64(j, "kick_cycles", st->kick_cycles);
    json_u64(j, "forced_kicks", st->forced_kicks);
    json_u64(j, "invalid_used", virtq_violation(vq) ? 1 : 0);
    json_u64(j, "indirect", st->indirect);
    json_u64(j, "resets", st->resets);
    json_obj_begin(j, "rule_breaks");
    json_u64(j, "unavailable", st->bad[VIRTQ_BAD_UNAVAIL]);
    json_u64(j, "used_len", st->bad[VIRTQ_BAD_USED_LEN]);
    json_u64(j, "in_order", st->bad[VIRTQ_BAD_IN_ORDER]);
    json_u64(j, "device", st->bad[VIRTQ_BAD_DEVICE]);
    json_obj_end(j);
}

/* The control queue's commands and how they were answered. */
static void vnet_json_ctrl(struct json *j, const struct vnet_dev *d, const struct vnet_ctrl *c)
{
    json_obj_begin(j, "ctrl");
    json_u64(j, "sent", c->sent);
    json_u64(j, "ok", c->ok);
    json_u64(j, "err", c->err);
    json_u64(j, "bad_reply", c->bad_reply);
    json_u64(j, "timeouts", c->timeouts);
    json_obj_end(j);
    json_u64(j, "announces", d->announces);
}

/* HASH_REPORT: the verdicts on every pair's reports (vnet_hash.h), summed;
 * types 0 when no report is checked. */
static void vnet_json_hash(struct json *j, const struct vnet_dev *d)
{
    json_obj_begin(j, "hash_report");
    json_u64(j, "types", d->hash_types);
    for (unsigned v = 0; v < VNET_HASH_NVERDICT; v++) {
        uint64_t n = 0;
        for (unsigned i = 0; i < d->npairs; i++)
            n += d->rxq[i].st.hash[v];
        json_u64(j, vnet_hash_verdict_name[v], n);
    }
    json_obj_end(j);
}

/* The CPU that polls a pair's RX (vnet_queue_cpu), each way's mode (poll
 * where its CPU could not be named: VNET_QUEUE_POLLED), and each way's
 * interrupts and the CPU that took them. */
static void vnet_json_pair_irqs(struct json *j, const struct vnet_qnote *rx,
                                const struct vnet_qnote *tx)
{
    json_u64(j, "cpu", rx->cpu);
    json_str(j, "rx_notify", vnet_notify_name(rx->mode));
    json_str(j, "tx_notify", vnet_notify_name(tx->mode));
    json_u64(j, "rx_interrupts", vnet_note_irqs(rx));
    json_i64(j, "rx_irq_cpu", vnet_note_irq_cpu(rx));
    json_u64(j, "tx_interrupts", vnet_note_irqs(tx));
    json_i64(j, "tx_irq_cpu", vnet_note_irq_cpu(tx));
}

/* Every queue pair's own counts: "queues", one object per pair in use
 * (the "tx" and "rx" objects are pair 0's in full), after the pairs'
 * hash reports, control queue and RSS. */
static void vnet_json_queues(struct json *j, const struct vnet_dev *d)
{
    vnet_json_hash(j, d);
    if (d->ctrl)
        vnet_json_ctrl(j, d, d->ctrl);
    json_bool(j, "rss", d->rss != NULL);
    json_u64(j, "max_queue_pairs", d->max_pairs);
    json_arr_begin(j, "queues");
    for (unsigned i = 0; i < d->npairs; i++) {
        const struct vnet_txq_stats *t = &d->txq[i].st;
        const struct vnet_rxq_stats *r = &d->rxq[i].st;
        json_obj_begin(j, NULL);
        json_u64(j, "queue", i);
        json_u64(j, "packets", t->packets + r->packets);
        json_u64(j, "tx_packets", t->packets);
        json_u64(j, "tx_bytes", t->bytes);
        json_u64(j, "tx_ring_full", t->ring_full);
        json_u64(j, "tx_halts", d->txq[i].note.halts);
        json_u64(j, "rx_packets", r->packets);
        json_u64(j, "rx_bytes", r->bytes);
        json_u64(j, "rx_halts", d->rxq[i].note.halts);
        vnet_json_pair_irqs(j, &d->rxq[i].note, &d->txq[i].note);
        json_u64(j, "hash_bad_type", r->hash[VNET_HASH_BAD_TYPE]);
        json_u64(j, "hash_bad_value", r->hash[VNET_HASH_BAD_VALUE]);
        json_obj_end(j);
    }
    json_arr_end(j);
}

/* SPEED_DUPLEX (virtio 1.2 s5.1.4): "speed_mbps" and "duplex", null
 * where unknown (not negotiated, the device does not know, or a value
 * out of range: then counted in config_out_of_range). */
static void vnet_json_link(struct json *j, const struct vnet_dev *d)
{
    if (d->speed == VNET_SPEED_UNKNOWN)
        json_null(j, "speed_mbps");
    else
        json_u64(j, "speed_mbps", d->speed);
    if (d->duplex == VNET_DUPLEX_UNKNOWN)
        json_null(j, "duplex");
    else
        json_str(j, "duplex", d->duplex == VNET_DUPLEX_FULL ? "full" : "half");
}

/* The device: its name, MAC, MTU, features and the driver's parameters. */
static void vnet_json_dev(struct json *j, const struct vnet_dev *d)
{
    char mac[18];
    snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", d->mac[0], d->mac[1], d->mac[2],
             d->mac[3], d->mac[4], d->mac[5]);
    json_str(j, "dev", d->vdev->name);
    json_str(j, "transport", d->vdev->transport);
    json_str(j, "mac", mac);
    json_u64(j, "mtu", d->mtu);
    vnet_json_link(j, d);
    json_u64(j, "hdr_len", d->hdr_len);
    vnet_features_json(j, "features_offered", d->offered);
    vnet_features_json(j, "features", d->features);
    json_str(j, "ring_format", vnet_ring_format(d));
    json_u64(j, "ring", d->params.ring_size);
    json_u64(j, "kick_batch", d->kick_batch);
    json_u64(j, "rx_refill", d->rx_refill);
    json_u64(j, "rx_coalesce", d->rx_coalesce);
    json_u64(j, "rx_coalesce_us", d->params.rx_coalesce_us);
    json_str(j, "txfull", d->txfull == VNET_TXFULL_DROP ? "drop" : "wait");
    json_bool(j, "tx_slots", virtq_bound(d->txq[0].vq));
    json_bool(j, "rx_chains", d->rx_chains);
}

/* "tx": pair 0's TX queue in full. */
static void vnet_json_tx(struct json *j, const struct vnet_dev *d)
{
    const struct vnet_txq *tq = &d->txq[0];
    const struct vnet_txq_stats *t = &tq->st;
    json_obj_begin(j, "tx");
    json_u64(j, "size", tq->size);
    json_u64(j, "packets", t->packets);
    json_u64(j, "bytes", t->bytes);
    json_u64(j, "bursts", t->bursts);
    vnet_json_virtq(j, tq->vq);
    json_u64(j, "reclaim_calls", t->reclaim_calls);
    json_u64(j, "reclaimed", t->reclaimed);
    json_u64(j, "ring_full", t->ring_full);
    json_u64(j, "full_wait_cycles", t->full_wait_cycles);
    json_u64(j, "wait_timeouts", t->wait_timeouts);
    json_u64(j, "dropped", t->dropped);
    json_u64(j, "len_mismatch", virtq_stats(tq->vq)->len_mismatch);
    json_u64(j, "in_flight", virtq_in_flight(tq->vq));
    json_u64(j, "chains", t->chains);
    json_u64(j, "csum", t->csum);
    json_u64(j, "gso_frames", t->gso_frames);
    json_u64(j, "gso_bytes", t->gso_bytes);
    json_u64(j, "offload_refused", t->offload_refused);
    vnet_notify_json(j, d, &tq->note, t->packets);
    json_obj_end(j);
}

/* The RX headers refused: "bad_hdr" in all, then each reason's count. */
static void vnet_json_bad_hdr(struct json *j, const struct vnet_rxq_stats *r)
{
    uint64_t bad = 0;
    for (unsigned i = 1; i < VNET_HDR_NBAD; i++)
        bad += r->bad_hdr[i];
    json_u64(j, "bad_hdr", bad);
    for (unsigned i = 1; i < VNET_HDR_NBAD; i++)
        if (i != VNET_HDR_BAD_LEN) /* counted in len_errors */
            json_u64(j, vnet_hdr_bad_name[i], r->bad_hdr[i]);
}

/* "rx": pair 0's RX queue in full. */
static void vnet_json_rx(struct json *j, const struct vnet_dev *d)
{
    const struct vnet_rxq *rq = &d->rxq[0];
    const struct vnet_rxq_stats *r = &rq->st;
    json_obj_begin(j, "rx");
    json_u64(j, "size", rq->size);
    json_u64(j, "packets", r->packets);
    json_u64(j, "bytes", r->bytes);
    json_u64(j, "polls", r->polls);
    vnet_json_virtq(j, rq->vq);
    json_u64(j, "refills", r->refills);
    json_u64(j, "refilled", r->refilled);
    json_u64(j, "len_errors", r->len_errors);
    json_u64(j, "merged", r->merged);
    json_u64(j, "bad_release", r->bad_release);
    json_u64(j, "reset_dropped", r->reset_dropped);
    json_u64(j, "csum_ok", r->csum_ok);
    json_u64(j, "gso_frames", r->gso_frames);
    json_u64(j, "gso_bytes", r->gso_bytes);
    vnet_json_bad_hdr(j, r);
    vnet_notify_json(j, d, &rq->note, r->packets);
    json_obj_end(j);
}

void vnet_stats_json(const struct vnet_dev *d, struct json *j)
{
    vnet_json_dev(j, d);
    vnet_json_tx(j, d);
    vnet_json_rx(j, d);
    vnet_json_queues(j, d);
    json_u64(j, "config_out_of_range", d->config_bad);
    json_bool(j, "broken", vnet_broken(d));
    if (vnet_broken(d))
        vnet_json_violation(j, d);
    if (d->fail_queue)
        json_u64(j, "device_status", d->dev_status);
}
