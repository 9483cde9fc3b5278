/* A simulated PCI function for host tests: 256 bytes of config space
 * behind pci_read and pci_write (kernel/pci.h), BARs that size as
 * hardware does (all ones written, the size mask read back, the type
 * bits read-only) and memory behind each memory BAR, where mem_map_mmio
 * maps. What the driver does outside config space, or maps outside a
 * BAR, is counted as a fault, not done. */
#ifndef VN_SIM_PCI_H
#define VN_SIM_PCI_H

#include <stdint.h>

#include "kernel/pci.h"

#define SIM_PCI_CFG     256
#define SIM_PCI_BAR_MAX (1u << 16) /* the largest BAR with memory behind it */

struct sim_pci {
    uint8_t cfg[SIM_PCI_CFG];
    uint64_t bar_size[6]; /* a power of two; 0: the BAR decodes nothing */
    uint8_t *bar_mem[6];  /* bar_size bytes once mapped (memory BARs up to SIM_PCI_BAR_MAX) */
    uint64_t cfg_faults;  /* accesses past config space, or past cfg_limit */
    uint64_t cfg_reads;   /* past cfg_limit (0: none) every read gives 0, which */
    uint64_t cfg_limit;   /* ends any walk: a driver that loops is counted, not hung */
    uint64_t map_faults;  /* mem_map_mmio of a range no BAR holds */
    uint8_t sizing[6];    /* all ones written to the BAR's low dword */
    uint8_t sizing_hi[6]; /* ... and to a 64-bit BAR's high one */
};

/* Makes p the function pci_read and pci_write reach, once cfg and
 * bar_size are set. */
extern struct sim_pci *sim_pci;
void sim_pci_bars(struct sim_pci *p);
void sim_pci_free(struct sim_pci *p);

/* Config space helpers for building one. */
void sim_pci_put32(struct sim_pci *p, unsigned off, uint32_t v);

#endif
