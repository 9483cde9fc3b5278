/* QEMU fw_cfg over its I/O ports (docs/specs/fw_cfg.rst in QEMU). */
#ifndef VN_FWCFG_H
#define VN_FWCFG_H

#include <stddef.h>
#include <stdint.h>

int fwcfg_present(void);
void fwcfg_select(uint16_t sel);
void fwcfg_read(void *buf, size_t len);
/* Looks a file up in the directory: 0, -ENOENT, or -EINVAL for a
 * directory that breaks fw_cfg.rst (fwcfg_dir_find). */
int fwcfg_find(const char *name, uint16_t *sel, uint32_t *size);
/* Reads a whole file into buf (NUL-terminated, at most cap-1 bytes):
 * its size, -ENOENT, or -E2BIG when it does not fit. */
int fwcfg_read_file(const char *name, char *buf, size_t cap);
/* All len bytes of item sel into buf: by one DMA transfer where the
 * device offers it (QEMU's since 2.9; byte reads of the data port run at
 * about 2 MB/s under TCG), else by the data port. 0, or -EIO when the
 * device reports a DMA error. */
int fwcfg_read_item(uint16_t sel, void *buf, uint32_t len);

#endif
