/* The control virtqueue (virtio 1.2 s5.1.6.5): setup, and one command at
 * a time with its reply checked. A command is one chain: the class, the
 * command and its data device-readable, then the one-byte ack
 * device-writable (s5.1.6.5: struct virtio_net_ctrl), and for a command
 * with a result that result device-writable after the ack (virtio 1.3
 * s5.1.6.5: command-specific-result). */
#include "drivers/virtio/vnet_ctrl.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "drivers/virtio/vnet_priv.h"
#include "kernel/mem.h"
#include "kernel/time.h"

#define VNET_ACK_NONE 0xff /* what the ack holds until the device writes it */

/* s5.1.2: controlq is 2N under MQ (N = max_virtqueue_pairs), else 2. */
static unsigned vnet_ctrl_index(const struct vnet_dev *d)
{
    return 2u * d->max_pairs;
}

static int vnet_ctrl_size(struct vnet_dev *d, unsigned q, uint16_t *num)
{
    struct virtio_dev *v = d->vdev;
    uint16_t max = v->ops->queue_max(v, q);
    if (!max || (max & (max - 1))) {
        printf("vnet: %s: control queue %u has size %u (need a power of two)\n", v->name, q, max);
        return -ENODEV;
    }
    *num = v->queue_size_fixed || max < VNET_CTRL_QSIZE ? max : VNET_CTRL_QSIZE;
    return 0;
}

int vnet_ctrl_init(struct vnet_dev *d)
{
    if (!(d->features & VIRTIO_BIT(VIRTIO_NET_F_CTRL_VQ)))
        return 0;
    unsigned q = vnet_ctrl_index(d);
    uint16_t num;
    int r = vnet_ctrl_size(d, q, &num);
    if (r)
        return r;
    struct vnet_ctrl *c = dma_pool_alloc(&d->pool, sizeof(*c), 64);
    memset(c, 0, sizeof(*c));
    r = vnet_virtq_init(d, q, num, NULL, &c->vq); /* polled: nothing waits long */
    if (r)
        return r;
    c->cmd = dma_pool_alloc(&d->pool, 2 + VNET_CTRL_DATA_MAX + 1 + VNET_CTRL_RESULT_MAX, 64);
    c->ack = c->cmd + 2 + VNET_CTRL_DATA_MAX;
    c->result = c->ack + 1;
    d->ctrl = c;
    return 0;
}

/* Polls for the one buffer out, up to VNET_CTRL_WAIT_MS. 1: back, with
 * its used length in *len; 0: not back; -EIO: the queue broke. */
static int vnet_ctrl_wait(struct vnet_ctrl *c, uint32_t *len)
{
    uint64_t t0 = time_cycles(), limit = time_tsc_hz / 1000u * VNET_CTRL_WAIT_MS;
    struct virtq_used_buf u;
    for (;;) {
        int got = virtq_get_used(c->vq, &u, 1);
        if (got != 0) {
            *len = u.len;
            return got < 0 ? -EIO : 1;
        }
        if (time_cycles() - t0 > limit)
            return 0;
        vnet_relax();
    }
}

/* What the device answered: s5.1.6.5, the ack is one byte, OK or ERR;
 * with OK the result's rlen bytes after it, with ERR the result may be
 * left unwritten. */
static int vnet_ctrl_reply(struct vnet_ctrl *c, uint32_t len, uint32_t rlen)
{
    uint8_t ack = VN_READ_ONCE(*c->ack);
    bool len_ok = ack == VIRTIO_NET_OK ? len == 1 + rlen : len >= 1 && len <= 1 + rlen;
    if (!len_ok || (ack != VIRTIO_NET_OK && ack != VIRTIO_NET_ERR)) {
        c->bad_reply++;
        c->last_error = !len_ok ? "reply of the wrong length" : "ack neither OK nor ERR";
        return -EPROTO;
    }
    if (ack == VIRTIO_NET_ERR) {
        c->err++;
        c->last_error = "VIRTIO_NET_ERR";
        return -EIO;
    }
    c->ok++;
    return 0;
}

int vnet_ctrl_cmd(struct vnet_dev *d, uint8_t cls, uint8_t cmd, const void *data, uint32_t len)
{
    return vnet_ctrl_cmd_result(d, cls, cmd, data, len, NULL, 0);
}

int vnet_ctrl_cmd_result(struct vnet_dev *d, uint8_t cls, uint8_t cmd, const void *data,
                         uint32_t len, void *result, uint32_t rlen)
{
    struct vnet_ctrl *c = d->ctrl;
    if (!c)
        return -EOPNOTSUPP;
    if (len > VNET_CTRL_DATA_MAX || rlen > VNET_CTRL_RESULT_MAX)
        return -EINVAL;
    if (c->stuck || virtq_broken(c->vq))
        return -EIO;
    c->cmd[0] = cls;
    c->cmd[1] = cmd;
    if (len)
        memcpy(c->cmd + 2, data, len);
    *c->ack = VNET_ACK_NONE;
    struct virtq_seg seg[3] = {{mem_virt_to_phys(c->cmd), 2 + len},
                               {mem_virt_to_phys(c->ack), 1},
                               {mem_virt_to_phys(c->result), rlen}};
    if (virtq_add_chain(c->vq, seg, 1, rlen ? 2 : 1, 1) < 0)
        return -EIO;
    virtq_kick(c->vq);
    c->sent++;
    uint32_t used = 0;
    int r = vnet_ctrl_wait(c, &used);
    if (r == 0) {
        c->timeouts++;
        c->stuck = true; /* the device still owns the buffer */
        c->last_error = "no reply";
        return -ETIMEDOUT;
    }
    if (r < 0)
        return r;
    r = vnet_ctrl_reply(c, used, rlen);
    if (!r && rlen)
        memcpy(result, c->result, rlen);
    return r;
}
