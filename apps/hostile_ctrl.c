/* app=hostile: control queue cases (virtio 1.2 s5.1.6.5). Each writes one
 * command through virtq_raw.h on the control queue: struct
 * virtio_net_ctrl's class, command and data device-readable, then its
 * one-byte ack device-writable, with one thing wrong. The app kicks and
 * reads the ack after the watch. */
#include <string.h>

#include "apps/hostile.h"
#include "apps/hostile_build.h"
#include "drivers/virtio/vnet_ctrl.h"
#include "drivers/virtio/vnet_ctrl_cmds.h"
#include "drivers/virtio/vnet_rss.h"

#define CTRL_BAD     0x7fu /* a class, or a command, no device has */
#define ACK_WRITABLE VIRTQ_RAW_F_WRITE
#define ACK_READABLE 0u
#define ACK_MISSING  0xffffu
#define RSS_FIXED    (4u + 2u + 2u + 2u + 1u) /* struct virtio_net_rss_config less the table */
#define RSS_BAD_LEN  100u                     /* rss_len: a table of 100 entries */

_Static_assert(HOSTILE_CTRL_CMD + RSS_FIXED + 2u * VNET_RSS_TABLE_MAX + VNET_RSS_KEY_LEN <=
                   HOSTILE_CTRL_ACK,
               "the largest command ends before the ack");
_Static_assert(HOSTILE_CTRL_ACK < HOSTILE_BUF, "the ack is in buf");

/* The command's first byte; class and command written. */
static uint8_t *ctrl_cmd(struct hostile_env *e, uint8_t cls, uint8_t cmd)
{
    uint8_t *p = e->buf + HOSTILE_CTRL_CMD;
    p[0] = cls;
    p[1] = cmd;
    return p;
}

/* Publishes the command of len bytes (header and data) at descriptor 0
 * and, unless ack is ACK_MISSING, the ack byte at descriptor 1 with the
 * flags ack names. */
static int ctrl_send(struct hostile_env *e, uint32_t len, uint16_t ack)
{
    uint64_t b = (uintptr_t)e->buf;
    uint16_t head = 0;
    e->buf[HOSTILE_CTRL_ACK] = HOSTILE_ACK_NONE;
    int r =
        hostile_desc(e, 0, b + HOSTILE_CTRL_CMD, len, ack == ACK_MISSING ? 0 : VIRTQ_RAW_F_NEXT, 1);
    if (!r && ack != ACK_MISSING)
        r = hostile_desc(e, 1, b + HOSTILE_CTRL_ACK, 1, ack, 0);
    return r ? r : hostile_publish(e, &head, 1);
}

/* s5.1.6.5.1: CTRL_RX PROMISC on, its one byte of data. */
static int ctrl_promisc(struct hostile_env *e, uint16_t ack)
{
    ctrl_cmd(e, VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC)[2] = 1;
    return ctrl_send(e, 3, ack);
}

int hostile_ctrl_class(struct hostile_env *e)
{
    ctrl_cmd(e, CTRL_BAD, 0)[2] = 0;
    return ctrl_send(e, 3, ACK_WRITABLE);
}

int hostile_ctrl_cmd(struct hostile_env *e)
{
    ctrl_cmd(e, VIRTIO_NET_CTRL_RX, CTRL_BAD)[2] = 1;
    return ctrl_send(e, 3, ACK_WRITABLE);
}

/* s5.1.6.5.1: PROMISC without its byte: the header alone. */
int hostile_ctrl_short(struct hostile_env *e)
{
    ctrl_cmd(e, VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC);
    return ctrl_send(e, 2, ACK_WRITABLE);
}

int hostile_ctrl_no_ack(struct hostile_env *e)
{
    return ctrl_promisc(e, ACK_MISSING);
}

int hostile_ctrl_ack_ro(struct hostile_env *e)
{
    return ctrl_promisc(e, ACK_READABLE);
}

/* s5.1.6.5.5: VQ_PAIRS_SET's le16 virtqueue_pairs. */
static int ctrl_pairs(struct hostile_env *e, uint32_t n)
{
    uint8_t *p = ctrl_cmd(e, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET);
    p[2] = (uint8_t)n;
    p[3] = (uint8_t)(n >> 8);
    return ctrl_send(e, 4, ACK_WRITABLE);
}

int hostile_ctrl_pairs0(struct hostile_env *e)
{
    return ctrl_pairs(e, 0);
}

/* One above max_virtqueue_pairs (at most 0x8000, s5.1.4.1: so at most
 * 0x8001, which still fits the le16). */
int hostile_ctrl_pairs_over(struct hostile_env *e)
{
    return ctrl_pairs(e, e->max_pairs + 1u);
}

static uint8_t *put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    return p + 2;
}

/* s5.1.6.5.7.1: struct virtio_net_rss_config with a table of len entries
 * naming queue, one TX pair, unclassified frames to receiveq1, our hash
 * types the device supports and the Microsoft key. */
static int ctrl_rss(struct hostile_env *e, uint16_t len, uint16_t queue)
{
    uint8_t *c = ctrl_cmd(e, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_RSS_CONFIG);
    uint32_t types = e->rss_types & VNET_RSS_HASH_OURS;
    uint8_t *p = put16(c + 2, (uint16_t)types);
    p = put16(p, (uint16_t)(types >> 16));
    p = put16(p, (uint16_t)(len - 1u)); /* indirection_table_mask */
    p = put16(p, 0);                    /* unclassified_queue */
    for (uint16_t i = 0; i < len; i++)
        p = put16(p, queue);
    p = put16(p, 1); /* max_tx_vq */
    *p++ = VNET_RSS_KEY_LEN;
    memcpy(p, vnet_rss_key_ms, VNET_RSS_KEY_LEN);
    return ctrl_send(e, 2u + RSS_FIXED + 2u * len + VNET_RSS_KEY_LEN, ACK_WRITABLE);
}

/* Every entry names receiveq(max_virtqueue_pairs + 1), which the device
 * does not have. */
int hostile_rss_queue(struct hostile_env *e)
{
    return ctrl_rss(e, VNET_RSS_TABLE_MAX, e->max_pairs);
}

int hostile_rss_len(struct hostile_env *e)
{
    return ctrl_rss(e, RSS_BAD_LEN, 0);
}
