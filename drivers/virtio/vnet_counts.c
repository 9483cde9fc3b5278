/* The frames the driver took since the last bring-up (vnet.h,
 * vnet_counts): a renegotiation zeroes the device's counters. */
#include "drivers/virtio/vnet_priv.h"

void vnet_counts(const struct vnet_dev *d, struct vnet_counts *c)
{
    *c = (struct vnet_counts){0};
    for (unsigned i = 0; i < d->npairs; i++) {
        c->rx_packets += d->rxq[i].st.packets;
        c->rx_bytes += d->rxq[i].st.bytes;
    }
}
