#include <errno.h>
#include <string.h>

#include "kernel/fwcfg.h"
#include "kernel/fwcfg_dir.h"
#include "kernel/io.h"

#define FWCFG_PORT_SEL  0x510
#define FWCFG_PORT_DATA 0x511
#define FWCFG_SIGNATURE 0x0000
#define FWCFG_FILE_DIR  0x0019

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
