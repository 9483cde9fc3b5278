/* Register idioms the memory-mapped transports (PCI modern, MMIO) share. */
#ifndef VN_VIRTIO_REGS_H
#define VN_VIRTIO_REGS_H

#include <stdint.h>

#include "kernel/io.h"

/* 64 feature bits through a 32-bit select/window pair: virtio 1.2
 * s4.1.4.3 (device_feature_select/device_feature) and s4.2.2
 * (DeviceFeaturesSel/DeviceFeatures), and the driver's pair likewise. */
static inline uint64_t virtio_features_read(uintptr_t sel, uintptr_t win)
{
    mmio_write32(sel, 0);
    uint64_t lo = mmio_read32(win);
    mmio_write32(sel, 1);
    uint64_t hi = mmio_read32(win);
    return hi << 32 | lo;
}

static inline void virtio_features_write(uintptr_t sel, uintptr_t win, uint64_t f)
{
    mmio_write32(sel, 0);
    mmio_write32(win, (uint32_t)f);
    mmio_write32(sel, 1);
    mmio_write32(win, (uint32_t)(f >> 32));
}

/* One device-config field, read with accesses as wide as the field
 * (s4.1.3.1, s4.2.2.2); little endian. */
static inline void virtio_config_copy(uintptr_t a, uint8_t *out, unsigned len)
{
    if (len == 2) {
        uint16_t v = mmio_read16(a);
        out[0] = (uint8_t)v;
        out[1] = (uint8_t)(v >> 8);
    } else if (len == 4) {
        uint32_t v = mmio_read32(a);
        for (int i = 0; i < 4; i++)
            out[i] = (uint8_t)(v >> (8 * i));
    } else {
        for (unsigned i = 0; i < len; i++)
            out[i] = mmio_read8(a + i);
    }
}

#endif
