/* drivers/virtio/vnet_ctrl.c and vnet_mq.c: the control queue's replies
 * (virtio 1.2 s5.1.6.5) and MQ's config value (s5.1.4) against
 * tests/unit/sim_virtio.c's device. The input decides
 * max_virtqueue_pairs, queues=, and per command the ack byte and the used
 * length the device answers with, or no answer. Always checked: bring-up
 * says 0 exactly when the pairs asked for fit a valid maximum, and each
 * command's result is what the reply says: OK and length 1 is 0, ERR -EIO,
 * another ack or length 0 -EPROTO, a length past the ack -EIO (the queue
 * broke), none -ETIMEDOUT; after a broken or stuck queue -EIO, sent
 * nowhere. */
#include <errno.h>

#include "drivers/virtio/vnet_ctrl.h"
#include "drivers/virtio/vnet_priv.h"
#include "kernel/mem.h"
#include "sim_virtio.h"
#include "tests/fuzz/fuzz.h"

#define CTF_CMDS 16 /* commands per input: a silent device costs a wait */

static uint8_t take(const uint8_t **in, size_t *n)
{
    if (!*n)
        return 0;
    (*n)--;
    return *(*in)++;
}

/* What vnet_ctrl_cmd must answer to ack and used length len. */
static int expected(uint8_t ack, uint32_t len)
{
    if (len > 1)
        return -EIO;
    if (len != 1 || ack > VIRTIO_NET_ERR)
        return -EPROTO;
    return ack == VIRTIO_NET_OK ? 0 : -EIO;
}

static struct vnet_dev *bring_up(struct sim_dev *s, const uint8_t **in, size_t *n)
{
    /* 0..SIM_PAIRS (the queues the simulated device has), or above 0x8000 */
    uint16_t max = (uint16_t)(take(in, n) << 8 | take(in, n));
    if (max <= 0x8000)
        max %= SIM_PAIRS + 1;
    uint16_t queues = take(in, n) % (VNET_MAX_PAIRS + 2);
    sim_set_mq(s, max, 40, 128, 0x3f);
    struct vnet_params p = {.rx_refill = 8, .queues = queues};
    struct vnet_dev *d = mem_alloc_dma(sizeof(*d), 64);
    bool valid = max >= 1 && max <= 0x8000;
    uint16_t asked = queues ? queues : 1;
    int r = vnet_dev_init(d, &s->vdev, &p);
    FUZZ_CHECK(r == ((valid ? asked <= max : asked == 1) ? 0 : -ERANGE));
    if (r)
        return NULL;
    FUZZ_CHECK(d->npairs == asked && s->pairs == (asked > 1 ? asked : 0));
    return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sim_dev *s = sim_new(VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_NET_F_MQ) |
                                    VIRTIO_BIT(VIRTIO_NET_F_CTRL_VQ),
                                64, false);
    struct vnet_dev *d = bring_up(s, &data, &size);
    bool dead = false;
    for (int c = 0; d && c < CTF_CMDS && size; c++) {
        uint8_t how = take(&data, &size);
        s->ctrl_mode = (how & 0xf0) == 0xf0 ? SIM_CTRL_SILENT : SIM_CTRL_RAW;
        s->ctrl_raw_ack = take(&data, &size);
        s->ctrl_raw_len = how & 3;
        uint64_t sent = s->ctrl_cmds;
        int r = vnet_ctrl_cmd(d, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, "\1\0", 2);
        if (dead) {
            FUZZ_CHECK(r == -EIO && s->ctrl_cmds == sent);
            continue;
        }
        int want = s->ctrl_mode == SIM_CTRL_SILENT ? -ETIMEDOUT
                                                   : expected(s->ctrl_raw_ack, s->ctrl_raw_len);
        FUZZ_CHECK(r == want && s->ctrl_cmds == sent + 1);
        dead = r == -ETIMEDOUT || s->ctrl_raw_len > 1;
        FUZZ_CHECK(!vnet_broken(d)); /* the data queues go on */
    }
    sim_free_all();
    return 0;
}
