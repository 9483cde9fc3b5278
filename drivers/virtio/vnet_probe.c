/* vnet_probe: every virtio-net device on every transport, brought up. */
#include <stdio.h>

#include "drivers/virtio/virtio_transport.h"
#include "drivers/virtio/vnet_priv.h"

static struct vnet_dev vnet_devs[VNET_MAX_DEVS];
static int vnet_ndevs;

int vnet_probe(struct vnet_dev **devs, int max, const struct vnet_params *p, const char *cmdline)
{
    struct virtio_dev *v[VNET_MAX_DEVS];
    bool prefer_legacy = p->features_off & VIRTIO_BIT(VIRTIO_F_VERSION_1);
    int nv = virtio_pci_probe(v, VNET_MAX_DEVS, VIRTIO_ID_NET, prefer_legacy);
    nv += virtio_mmio_probe(v + nv, VNET_MAX_DEVS - nv, VIRTIO_ID_NET, cmdline);
    int n = 0;
    for (int i = 0; i < nv && n < max && vnet_ndevs < VNET_MAX_DEVS; i++) {
        struct vnet_dev *d = &vnet_devs[vnet_ndevs];
        int r = vnet_dev_init(d, v[i], p);
        if (r)
            return r;
        vnet_ndevs++;
        devs[n++] = d;
    }
    return n;
}
