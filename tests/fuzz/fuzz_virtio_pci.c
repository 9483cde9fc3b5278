/* drivers/virtio/virtio_pci_modern.c's capability walk (virtio 1.2
 * s4.1.4) and kernel/pci_cap.c's BARs and capability list, over
 * tests/unit/sim_pci.c's function: the input is its config space (256
 * bytes) and its BAR sizes, then transport calls. Whatever the device
 * says, the driver reads nothing past config space, maps nothing outside
 * a BAR, takes the first capability of each type, and once set up every
 * window it uses lies inside the one mapped: the common config's
 * CC_LEN bytes, the device config (read_config refuses a range past its
 * end), each queue's doorbell (inside the notify window, or the queue
 * is broken). */
#include <errno.h>

#include "drivers/virtio/virtio_pci.h"
#include "drivers/virtio/virtio_transport.h"
#include "drivers/virtio/virtq_priv.h"
#include "sim_pci.h"
#include "sim_virtio.h"
#include "tests/fuzz/fuzz.h"

#define CC_CFGGEN   0x15
#define CC_Q_SELECT 0x16
#define CC_Q_NOFF   0x1e
#define CC_LEN      0x38

struct pin {
    const uint8_t *d;
    size_t n;
};

static uint32_t in8(struct pin *in)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->d++;
}

static uint32_t in16(struct pin *in)
{
    return in8(in) | in8(in) << 8;
}

/* Whether [a, a + len) lies in one BAR's memory. */
static bool in_bar(const struct sim_pci *p, uintptr_t a, uint64_t len)
{
    for (unsigned i = 0; i < 6; i++) {
        uintptr_t m = (uintptr_t)p->bar_mem[i];
        if (m && a >= m && a - m <= p->bar_size[i] && len <= p->bar_size[i] - (a - m))
            return true;
    }
    return false;
}

static void check_windows(const struct sim_pci *p, const struct virtio_pci *vp)
{
    FUZZ_CHECK(in_bar(p, vp->common, CC_LEN));
    FUZZ_CHECK(vp->notify_len >= 1 && in_bar(p, vp->notify, vp->notify_len));
    FUZZ_CHECK(vp->devcfg_len >= 1 && in_bar(p, vp->devcfg, vp->devcfg_len));
    FUZZ_CHECK(!vp->isr || in_bar(p, vp->isr, 1));
}

static void read_config(struct virtio_pci *vp, struct pin *in)
{
    struct virtio_dev *v = &vp->vdev;
    unsigned off = in8(in) & 0x80 ? in16(in) | in16(in) << 16 : in16(in) % (vp->devcfg_len + 8);
    unsigned len = in8(in) % 65;
    uint8_t buf[64];
    mmio_write8(vp->common + CC_CFGGEN, (uint8_t)in8(in));
    int r = v->ops->read_config(v, off, buf, len);
    bool fits = (uint64_t)off + len <= vp->devcfg_len;
    FUZZ_CHECK(r == (fits ? 0 : -EINVAL));
    if (fits)
        FUZZ_CHECK(!len || !memcmp(buf, (const void *)(vp->devcfg + off), len));
}

static void notifier(struct virtio_pci *vp, struct virtq *vq, struct pin *in)
{
    uint16_t noff = (uint16_t)in16(in);
    mmio_write16(vp->common + CC_Q_NOFF, noff);
    vp->vdev.ops->queue_notifier(&vp->vdev, 0, vq);
    uint64_t off = (uint64_t)noff * vp->notify_mult;
    bool inside = off + 2 <= vp->notify_len;
    FUZZ_CHECK(virtq_broken(vq) == !inside);
    FUZZ_CHECK(vq->db.addr == vp->notify + (inside ? off : 0));
    FUZZ_CHECK(mmio_read16(vp->common + CC_Q_SELECT) == 0);
    vq->db.ring(&vq->db, 0); /* the kick: a 16-bit write inside the window */
}

static void transport(struct virtio_pci *vp, struct pin *in)
{
    struct virtq *vq;
    FUZZ_CHECK(virtq_create(&vq, 0, 16, 0) == 0);
    while (in->n) {
        if (in8(in) & 1)
            read_config(vp, in);
        else if (!virtq_broken(vq))
            notifier(vp, vq, in);
    }
}

static struct sim_pci pci;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n > 1024)
        return 0;
    struct pin in = {data, n};
    memset(&pci, 0, sizeof(pci));
    for (unsigned i = 0; i < SIM_PCI_CFG; i++)
        pci.cfg[i] = (uint8_t)in8(&in);
    for (unsigned i = 0; i < 6; i++) {
        uint32_t e = in8(&in);
        pci.bar_size[i] = e & 0x80 ? 0 : 16ull << (e % 13); /* up to SIM_PCI_BAR_MAX */
    }
    sim_pci_bars(&pci);
    struct virtio_pci vp;
    memset(&vp, 0, sizeof(vp));
    vp.pci.hdr_type = 0;
    int r = virtio_pci_modern_setup(&vp);
    FUZZ_CHECK(pci.cfg_faults == 0 && pci.map_faults == 0);
    FUZZ_CHECK(r == 0 || r == -ENODEV);
    if (r == 0) {
        check_windows(&pci, &vp);
        transport(&vp, &in);
    }
    sim_pci_free(&pci);
    sim_free_all();
    return 0;
}
