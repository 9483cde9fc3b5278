/* vnperf.efi: a GNU-EFI application that carries the kernel ELF, loads it
 * at its link address, fills the same boot_info the PVH entry fills, exits
 * boot services and jumps to kernel_entry64(). Nothing after the jump
 * knows which path booted. */
#include <efi.h>
#include <efilib.h>

#include "boot/efi/efi_cmdline.h"
#include "boot/efi/efi_elf.h"
#include "boot/efi/efi_loader.h"
#include "boot/efi/efi_memmap.h"
#include "kernel/boot_info.h"
#include "kernel/exit.h"
#include "kernel/io.h"

#include <errno.h>
#include <string.h>

/* boot/efi/efi_kernel.S */
extern const UINT8 vnperf_kernel_start[] __attribute__((visibility("hidden")));
extern const UINT8 vnperf_kernel_end[] __attribute__((visibility("hidden")));

#define EBS_TRIES 8

/* Loader data: reusable by the kernel once it has copied it, which is the
 * first thing kernel_entry64() does. */
static struct boot_info bi;
static struct efi_elf_image kimg;

/* The file path node of the image, for telling the shell's argv[0] apart. */
static const CHAR16 *image_file_path(EFI_LOADED_IMAGE *li)
{
    EFI_DEVICE_PATH *dp = li->FilePath;
    /* A node shorter than its own header would never advance. */
    for (; dp && !IsDevicePathEnd(dp) && (size_t)DevicePathNodeLength(dp) >= sizeof(*dp);
         dp = NextDevicePathNode(dp))
        if (DevicePathType(dp) == MEDIA_DEVICE_PATH && DevicePathSubType(dp) == MEDIA_FILEPATH_DP)
            return ((FILEPATH_DEVICE_PATH *)dp)->PathName;
    return NULL;
}

static EFI_STATUS get_cmdline(EFI_LOADED_IMAGE *li)
{
    if (!li->LoadOptions || li->LoadOptionsSize == 0)
        return EFI_SUCCESS;
    int rc = efi_cmdline_convert(li->LoadOptions, li->LoadOptionsSize, image_file_path(li),
                                 bi.cmdline, sizeof(bi.cmdline));
    if (rc == -EINVAL) {
        /* Boot entries may carry binary data in the same field. */
        Print(L"vnperf.efi: load options are not text, ignored\n");
        return EFI_SUCCESS;
    }
    if (rc == -E2BIG)
        return efi_fail(VN_EXIT_CONFIG, EFI_INVALID_PARAMETER,
                        L"command line longer than %d bytes\n", BOOT_CMDLINE_MAX - 1);
    return EFI_SUCCESS;
}

/* ACPI 2.0+ RSDP if the firmware has one, else the 1.0 one (UEFI 2.10
 * s4.6.1, industry standard configuration tables). */
static uint64_t find_rsdp(EFI_SYSTEM_TABLE *systab)
{
    EFI_GUID acpi20 = ACPI_20_TABLE_GUID, acpi10 = ACPI_TABLE_GUID;
    uint64_t v1 = 0;
    for (UINTN i = 0; i < systab->NumberOfTableEntries; i++) {
        EFI_CONFIGURATION_TABLE *t = &systab->ConfigurationTable[i];
        int is20 = CompareGuid(&t->VendorGuid, &acpi20) == 0;
        int is10 = CompareGuid(&t->VendorGuid, &acpi10) == 0;
        if ((!is20 && !is10) || !t->VendorTable || CompareMem(t->VendorTable, "RSD PTR ", 8) != 0)
            continue;
        if (is20)
            return (uint64_t)(uintptr_t)t->VendorTable;
        v1 = (uint64_t)(uintptr_t)t->VendorTable;
    }
    return v1;
}

/* A buffer for the memory map, sized with room to spare: once the first
 * ExitBootServices() has been tried, no boot service other than
 * GetMemoryMap may run (UEFI 2.10 s7.4.6), so no allocating later. */
static EFI_STATUS alloc_map(void **map, UINTN *cap)
{
    UINTN size = 0, key, dsize;
    UINT32 dver;
    EFI_STATUS st = uefi_call_wrapper(BS->GetMemoryMap, 5, &size, NULL, &key, &dsize, &dver);
    if (st != EFI_BUFFER_TOO_SMALL)
        return efi_fail(VN_EXIT_INTERNAL, st, L"GetMemoryMap size query failed (%r)\n", st);
    *cap = size + 16 * dsize;
    st = uefi_call_wrapper(BS->AllocatePool, 3, EfiLoaderData, *cap, map);
    if (EFI_ERROR(st))
        return efi_fail(VN_EXIT_OOM, st, L"no memory for the memory map (%r)\n", st);
    return EFI_SUCCESS;
}

/* Gets the map, converts it and exits boot services; a changed map key
 * means something allocated in between, so try again with a fresh map.
 * Errors before the first try leave boot services usable: the kernel's
 * pages and the map go back to the firmware. */
static EFI_STATUS exit_boot_services(EFI_HANDLE image, void *map, UINTN cap)
{
    UINTN size, key, dsize;
    UINT32 dver;
    EFI_STATUS st = EFI_LOAD_ERROR;
    for (int tries = 0; tries < EBS_TRIES; tries++) {
        size = cap;
        st = uefi_call_wrapper(BS->GetMemoryMap, 5, &size, map, &key, &dsize, &dver);
        int rc = EFI_ERROR(st) ? 0 : efi_memmap_convert(map, size, dsize, &bi);
        if ((EFI_ERROR(st) || rc) && tries == 0) {
            efi_free_kernel(&kimg);
            FreePool(map);
        }
        if (EFI_ERROR(st))
            return efi_fail(VN_EXIT_INTERNAL, st, tries ? NULL : L"GetMemoryMap failed (%r)\n", st);
        if (rc)
            return efi_fail(VN_EXIT_INTERNAL, EFI_LOAD_ERROR, tries ? NULL : L"memory map %a\n",
                            rc == -ENOSPC ? "has too many regions for boot_info" : "is malformed");
        st = uefi_call_wrapper(BS->ExitBootServices, 2, image, key);
        if (st != EFI_INVALID_PARAMETER)
            break;
    }
    /* The console may be gone after a failed ExitBootServices(). */
    if (EFI_ERROR(st))
        return efi_fail(VN_EXIT_INTERNAL, st, NULL);
    return EFI_SUCCESS;
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab)
{
    uint64_t tsc = rdtsc();
    InitializeLib(image, systab);

    bi.magic = BOOT_INFO_MAGIC;
    bi.path = BOOT_PATH_UEFI;
    bi.tsc_boot = tsc;

    const char *why;
    size_t ksize = (size_t)(vnperf_kernel_end - vnperf_kernel_start);
    if (efi_elf_parse(vnperf_kernel_start, ksize, &kimg, &why))
        return efi_fail(VN_EXIT_INTERNAL, EFI_LOAD_ERROR, L"embedded kernel: %a\n", why);

    EFI_LOADED_IMAGE *li;
    EFI_STATUS st =
        uefi_call_wrapper(BS->HandleProtocol, 3, image, &LoadedImageProtocol, (void **)&li);
    if (EFI_ERROR(st))
        return efi_fail(VN_EXIT_INTERNAL, st, L"no LoadedImage protocol (%r)\n", st);
    st = get_cmdline(li);
    if (EFI_ERROR(st))
        return st;
    bi.rsdp = find_rsdp(systab);

    void *map = NULL;
    UINTN map_cap = 0;
    st = alloc_map(&map, &map_cap);
    if (EFI_ERROR(st))
        return st;
    st = efi_load_kernel(vnperf_kernel_start, &kimg, li);
    if (EFI_ERROR(st)) {
        FreePool(map);
        return efi_fail(VN_EXIT_OOM, st, NULL);
    }

    Print(L"vnperf.efi: kernel 0x%lx-0x%lx entry 0x%lx, rsdp 0x%lx, cmdline \"%a\"\n",
          kimg.range[0].base,
          kimg.range[kimg.nrange - 1].base + kimg.range[kimg.nrange - 1].pages * EFI_PAGE_SIZE,
          kimg.entry, bi.rsdp, bi.cmdline);

    st = exit_boot_services(image, map, map_cap);
    if (EFI_ERROR(st))
        return st;

    /* Boot services are gone: no console, no allocator, and the firmware's
     * interrupt handlers must not run on the kernel's memory. */
    __asm__ volatile("cli\n\tcall *%0" : : "r"(kimg.entry), "D"(&bi) : "memory");
    __builtin_unreachable();
}
