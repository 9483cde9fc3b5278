# GNU-EFI loader and the bootable ESP image; included by the top Makefile.
# vnperf.efi carries $(KERNEL_ELF) (stripped) and loads it; esp.img is a GPT
# disk whose one EFI System Partition holds EFI/BOOT/BOOTX64.EFI, for -drive
# under OVMF or dd to a USB stick. Uses Debian gnu-efi's crt0 and linker
# script where the package installs them.

EFI_DIR      := $(BUILD)/efi
EFI_APP      := $(BUILD)/vnperf.efi
ESP_IMG      := $(BUILD)/esp.img
ESP_MB       := 16
GNUEFI_LIB   := /usr/lib
GNUEFI_INC   := /usr/include/efi
GNUEFI_CRT0  := $(GNUEFI_LIB)/crt0-efi-x86_64.o
GNUEFI_LDS   := $(GNUEFI_LIB)/elf_x86_64_efi.lds

# MS ABI for firmware calls (uefi_call_wrapper is then a plain call); PIC
# because the firmware loads the image anywhere and _relocate fixes it up.
EFI_CFLAGS := -std=gnu11 -O2 -g -ffreestanding -fpic -fshort-wchar -mno-red-zone \
    -fno-stack-protector -fno-stack-check -fno-strict-aliasing -fno-merge-all-constants \
    -fno-asynchronous-unwind-tables -maccumulate-outgoing-args -DGNU_EFI_USE_MS_ABI \
    -Wall -Wextra -Werror -I. -I$(GNUEFI_INC) -I$(GNUEFI_INC)/x86_64 -MMD -MP

EFI_OBJS := $(patsubst boot/efi/%.c,$(EFI_DIR)/%.o,$(wildcard boot/efi/*.c)) $(EFI_DIR)/efi_kernel.o

all: $(ESP_IMG)
clean: clean-efi
.PHONY: clean-efi
clean-efi:
	rm -f $(EFI_APP) $(ESP_IMG) $(ESP_IMG).tmp

# deps: gnu-efi headers and mtools come from Debian packages.
$(EFI_DIR)/%.o: boot/efi/%.c | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  EFICC   $<")
	$(Q)$(CC) $(EFI_CFLAGS) -c $< -o $@

# Debug info stays in $(KERNEL_ELF); the firmware only needs the segments.
$(EFI_DIR)/vnperf-kernel.elf: $(KERNEL_ELF)
	@mkdir -p $(dir $@)
	$(Q)$(OBJCOPY) --strip-all $< $@

$(EFI_DIR)/efi_kernel.o: boot/efi/efi_kernel.S $(EFI_DIR)/vnperf-kernel.elf
	@$(if $(Q),echo "  EFIAS   $<")
	$(Q)$(CC) -c -DVNPERF_KERNEL='"$(EFI_DIR)/vnperf-kernel.elf"' $< -o $@

$(EFI_DIR)/vnperf.so: $(EFI_OBJS) $(GNUEFI_CRT0) $(GNUEFI_LDS)
	@$(if $(Q),echo "  EFILD   $@")
	$(Q)$(LD) -nostdlib -znocombreloc -shared -Bsymbolic --no-undefined -T $(GNUEFI_LDS) \
	    $(GNUEFI_CRT0) $(EFI_OBJS) -L$(GNUEFI_LIB) -lefi -lgnuefi -o $@

$(EFI_APP): $(EFI_DIR)/vnperf.so
	@$(if $(Q),echo "  EFIAPP  $@")
	$(Q)$(OBJCOPY) -j .text -j .sdata -j .data -j .dynamic -j .dynsym -j .rel -j .rela \
	    -j .rel.* -j .rela.* -j .reloc --target efi-app-x86_64 --subsystem=10 $< $@

# GPT with one ESP at 1 MiB (boot/efi/gpt.py), FAT16 inside it (2 KiB
# clusters: FAT16 rather than FAT12 at this size, which every firmware
# reads). Built under a temporary name so an interrupted build leaves no
# half image.
ESP_PART := $(ESP_IMG).tmp@@1048576
$(ESP_IMG): $(EFI_APP) boot/efi/gpt.py | deps
	@$(if $(Q),echo "  ESP     $@")
	$(Q)rm -f $@.tmp
	$(Q)sectors=$$($(PYTHON) boot/efi/gpt.py $@.tmp $(ESP_MB)) && \
	    MTOOLS_SKIP_CHECK=1 mformat -i $(ESP_PART) -T $$sectors -h 64 -s 32 -H 2048 -c 4 -N 564e5046 \
	    -v VNPERF ::
	$(Q)MTOOLS_SKIP_CHECK=1 mmd -i $(ESP_PART) ::/EFI ::/EFI/BOOT
	$(Q)MTOOLS_SKIP_CHECK=1 mcopy -i $(ESP_PART) $< ::/EFI/BOOT/BOOTX64.EFI
	$(Q)mv $@.tmp $@
