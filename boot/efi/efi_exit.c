/* Leaving on an error. On real firmware the boot manager takes over again;
 * under QEMU that would sit in the boot menu until a runner times out, so
 * there the exit code goes to isa-debug-exit like the kernel's. */
#include <efi.h>
#include <efilib.h>

#include "boot/efi/efi_loader.h"
#include "kernel/io.h"

#define FW_CFG_PORT_SEL  0x510
#define FW_CFG_PORT_DATA 0x511
#define FW_CFG_SIGNATURE 0x0000
#define DEBUG_EXIT_PORT  0xf4

/* Port I/O only inside a VM (CPUID.1:ECX[31]), and only then asks fw_cfg
 * for QEMU's signature: bare metal never sees a write to these ports. */
static int under_qemu(void)
{
    uint32_t r[4];
    cpuid(1, 0, r);
    if (!(r[2] & (1u << 31)))
        return 0;
    pio_write16(FW_CFG_PORT_SEL, FW_CFG_SIGNATURE);
    char sig[4];
    for (int i = 0; i < 4; i++)
        sig[i] = (char)pio_read8(FW_CFG_PORT_DATA);
    return sig[0] == 'Q' && sig[1] == 'E' && sig[2] == 'M' && sig[3] == 'U';
}

EFI_STATUS efi_fail(int code, EFI_STATUS st, const CHAR16 *fmt, ...)
{
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        Print(L"vnperf.efi: error: ");
        VPrint(fmt, ap);
        va_end(ap);
    }
    if (under_qemu())
        pio_write8(DEBUG_EXIT_PORT, (uint8_t)code);
    return EFI_ERROR(st) ? st : EFI_LOAD_ERROR;
}
