/* The control virtqueue (virtio 1.2 s5.1.6.5): one command at a time,
 * its reply checked. Used by the MQ and RSS commands (vnet_mq.c) and by
 * any later one. */
#ifndef VN_VNET_CTRL_H
#define VN_VNET_CTRL_H

#include <stdbool.h>
#include <stdint.h>

/* Classes and commands, virtio 1.2 s5.1.6.5 */
#define VIRTIO_NET_CTRL_MQ              4
#define VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET 0
#define VIRTIO_NET_CTRL_MQ_RSS_CONFIG   1
#define VIRTIO_NET_CTRL_MQ_HASH_CONFIG  2
#define VIRTIO_NET_CTRL_MQ_VQ_PAIRS_MIN 1
#define VIRTIO_NET_CTRL_MQ_VQ_PAIRS_MAX 0x8000
#define VIRTIO_NET_OK                   0
#define VIRTIO_NET_ERR                  1

/* Largest command-specific data we send: an RSS config with a 128-entry
 * table and a 40-byte key is 4 + 2 + 2 + 256 + 2 + 1 + 40. */
#define VNET_CTRL_DATA_MAX 320
/* Largest command-specific result taken: VQ_GET's struct
 * virtio_net_ctrl_coal (virtio 1.3 s5.1.6.5.6). */
#define VNET_CTRL_RESULT_MAX 8
#define VNET_CTRL_WAIT_MS    100 /* a device that does not answer by then never will */
#define VNET_CTRL_QSIZE      64  /* at most: one command is ever out */

struct vnet_ctrl {
    struct virtq *vq;
    uint8_t *cmd;    /* class, command, data: device-readable */
    uint8_t *ack;    /* one byte the device writes */
    uint8_t *result; /* after the ack: a command-specific result the device writes */
    uint64_t sent, ok, err, bad_reply, timeouts;
    const char *last_error; /* why the last command failed, for reports */
    bool stuck;             /* a command never came back: the queue is not reused */
};

struct vnet_dev;

/* Sets up the control queue when CTRL_VQ was negotiated: its index is 2N
 * with N max_virtqueue_pairs under MQ, else 2 (s5.1.2). Before
 * DRIVER_OK. 0 or -errno. */
int vnet_ctrl_init(struct vnet_dev *d);

/* Sends one command and waits for its reply (bounded: VNET_CTRL_WAIT_MS):
 * 0 on VIRTIO_NET_OK; -EIO on VIRTIO_NET_ERR; -EPROTO on a reply of the
 * wrong length or an ack that is neither; -ETIMEDOUT when none came (the
 * queue is then not used again: -EIO after); -EOPNOTSUPP without the
 * control queue; -EINVAL for data longer than VNET_CTRL_DATA_MAX. */
int vnet_ctrl_cmd(struct vnet_dev *d, uint8_t cls, uint8_t cmd, const void *data, uint32_t len);

/* As vnet_ctrl_cmd, for a command with a command-specific result (virtio
 * 1.3 s5.1.6.5: device-writable, after the ack). On VIRTIO_NET_OK the
 * device wrote the ack and all rlen bytes (used length 1 + rlen, else
 * -EPROTO), copied to result; on VIRTIO_NET_ERR nothing is taken from it
 * (-EIO; the driver MUST ignore it). -EINVAL for rlen above
 * VNET_CTRL_RESULT_MAX. */
int vnet_ctrl_cmd_result(struct vnet_dev *d, uint8_t cls, uint8_t cmd, const void *data,
                         uint32_t len, void *result, uint32_t rlen);

#endif
