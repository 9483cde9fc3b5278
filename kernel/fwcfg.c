#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "kernel/fwcfg.h"
#include "kernel/fwcfg_dir.h"
#include "kernel/io.h"
#include "kernel/mem.h"

#define FWCFG_PORT_SEL  0x510
#define FWCFG_PORT_DATA 0x511
#define FWCFG_PORT_DMA  0x514 /* x86: the DMA address, big-endian, high half first */
#define FWCFG_SIGNATURE 0x0000
#define FWCFG_ID        0x0001 /* feature bitmap, little-endian */
#define FWCFG_FILE_DIR  0x0019

/* fw_cfg.rst, "DMA interface" */
#define FWCFG_ID_DMA     (1u << 1)
#define FWCFG_DMA_ERROR  (1u << 0)
#define FWCFG_DMA_READ   (1u << 1)
#define FWCFG_DMA_SELECT (1u << 3)

struct fwcfg_dma {
    uint32_t control; /* big-endian, as every field */
    uint32_t length;
    uint64_t address;
} __attribute__((packed, aligned(16)));

void fwcfg_select(uint16_t sel)
{
    pio_write16(FWCFG_PORT_SEL, sel);
}

void fwcfg_read(void *buf, size_t len)
{
    uint8_t *p = buf;
    for (size_t i = 0; i < len; i++)
        p[i] = pio_read8(FWCFG_PORT_DATA);
}

int fwcfg_present(void)
{
    char sig[4];
    fwcfg_select(FWCFG_SIGNATURE);
    fwcfg_read(sig, sizeof(sig));
    return memcmp(sig, "QEMU", 4) == 0;
}

static void fwcfg_pio_read(void *ctx, void *buf, size_t len)
{
    (void)ctx;
    fwcfg_read(buf, len);
}

int fwcfg_find(const char *name, uint16_t *sel, uint32_t *size)
{
    if (!fwcfg_present())
        return -ENOENT;
    fwcfg_select(FWCFG_FILE_DIR);
    return fwcfg_dir_find(fwcfg_pio_read, NULL, name, sel, size);
}

int fwcfg_read_file(const char *name, char *buf, size_t cap)
{
    uint16_t sel;
    uint32_t size;
    int rc = fwcfg_find(name, &sel, &size);

    if (rc < 0)
        return rc;
    if (cap == 0 || size > cap - 1)
        return -E2BIG;
    fwcfg_select(sel);
    fwcfg_read(buf, size);
    buf[size] = '\0';
    return (int)size;
}

static bool fwcfg_has_dma(void)
{
    uint8_t id[4];
    fwcfg_select(FWCFG_ID);
    fwcfg_read(id, sizeof(id));
    return (id[0] & FWCFG_ID_DMA) != 0;
}

int fwcfg_read_item(uint16_t sel, void *buf, uint32_t len)
{
    if (!fwcfg_has_dma()) {
        fwcfg_select(sel);
        fwcfg_read(buf, len);
        return 0;
    }
    volatile struct fwcfg_dma d = {
        .control = __builtin_bswap32((uint32_t)sel << 16 | FWCFG_DMA_SELECT | FWCFG_DMA_READ),
        .length = __builtin_bswap32(len),
        .address = __builtin_bswap64(mem_virt_to_phys(buf)),
    };
    uint64_t a = mem_virt_to_phys((const void *)&d);
    barrier_mb();
    /* Writing the low half starts the transfer. */
    pio_write32(FWCFG_PORT_DMA, __builtin_bswap32((uint32_t)(a >> 32)));
    pio_write32(FWCFG_PORT_DMA + 4, __builtin_bswap32((uint32_t)a));
    uint32_t control;
    /* The device clears control when done, or leaves the error bit. */
    while ((control = __builtin_bswap32(d.control)) & ~FWCFG_DMA_ERROR)
        cpu_relax();
    barrier_mb();
    return control & FWCFG_DMA_ERROR ? -EIO : 0;
}
