# vnperf: one x86_64 image (PVH ELF + UEFI app), host tools and tests.
# Out of tree: everything lands in $(BUILD). V=1 shows full commands.

BUILD  ?= build
V      ?= 0
PYTHON ?= /usr/bin/python3
ifeq ($(V),1)
Q :=
else
Q := @
endif

CC      := gcc
LD      := ld
OBJCOPY := objcopy

.DEFAULT_GOAL := all
.PHONY: all deps run test unit pyunit integration soak clean distclean format format-check bench linux-guest \
        passt next

# ---- Debian dependencies (tools/deps.sh is idempotent and fast when done)
deps:
	$(Q)tools/deps.sh

# ---- newlib from Debian's newlib-source, built for x86_64-elf
NEWLIB_DIR    := $(BUILD)/newlib
NEWLIB_PREFIX := $(NEWLIB_DIR)/install
NEWLIB_SYS    := $(NEWLIB_PREFIX)/x86_64-elf
# The stamp names the build's flavour: change it when the flags change.
NEWLIB_STAMP  := $(NEWLIB_DIR)/.installed-c99
NEWLIB_CFLAGS := -O2 -g -ffreestanding -fno-stack-protector -mno-red-zone -fno-pic -fno-pie \
                 -fno-asynchronous-unwind-tables

$(NEWLIB_STAMP): | deps
	$(Q)tools/build-newlib.sh $(NEWLIB_DIR) $(abspath $(NEWLIB_STAMP)) "$(NEWLIB_CFLAGS)"

# ---- lwIP from Debian's lwip source package (tools/fetch-lwip.sh)
LWIP_DIR   := $(BUILD)/lwip
LWIP_SRC   := $(LWIP_DIR)/src
LWIP_STAMP := $(LWIP_DIR)/.unpacked
$(LWIP_STAMP): | deps
	$(Q)tools/fetch-lwip.sh $(LWIP_DIR)

# ---- passt from Debian trixie's source (tools/fetch-passt.sh): the runner
# prefers build/passt/passt; bookworm's passt stalls the TCP stream
# (docs/lwip.md), so the integration tests need this one. The script is
# done at once when build/passt/stamp names its pinned version.
passt: | deps
	$(Q)tools/fetch-passt.sh $(BUILD)/passt

# ---- Debian 13 (trixie)'s QEMU 10.0 and DPDK 24.11, installed by debootstrap
# into build/next (tools/fetch-next.sh; root): the second, real QEMU and DPDK
# that --qemu next and --testpmd next run, for a baseline-vs-new A/B. Done
# at once when build/next.stamp names the installed versions.
next:
	$(Q)tools/fetch-next.sh $(BUILD)/next

# ---- kernel image
GCC_INC := $(shell $(CC) -print-file-name=include)
LIBGCC  := $(shell $(CC) -print-libgcc-file-name)

KINC := -I. -Inet/include -isystem $(LWIP_SRC)/src/include -nostdinc \
        -isystem $(NEWLIB_SYS)/include -isystem $(GCC_INC)
KFLAGS_BASE := -std=gnu11 -O2 -g -ffreestanding -fno-stack-protector -fno-pic -fno-pie \
        -mno-red-zone -fno-omit-frame-pointer -fno-asynchronous-unwind-tables \
        -fno-strict-aliasing --param=min-pagesize=0 -MMD -MP
KCFLAGS := $(KFLAGS_BASE) -Wall -Wextra -Wshadow -Werror $(KINC)
KASFLAGS := -MMD -MP -I.

KSRCS := $(wildcard boot/*.S boot/*.c kernel/*.c drivers/virtio/*.c net/*.c apps/*.c)
KOBJS := $(patsubst %,$(BUILD)/obj/%.o,$(basename $(KSRCS)))

LWIP_CORE := core/init.c core/def.c core/dns.c core/inet_chksum.c core/ip.c core/mem.c \
    core/memp.c core/netif.c core/pbuf.c core/raw.c core/stats.c core/sys.c core/tcp.c \
    core/tcp_in.c core/tcp_out.c core/timeouts.c core/udp.c core/ipv4/autoip.c \
    core/ipv4/dhcp.c core/ipv4/etharp.c core/ipv4/icmp.c core/ipv4/igmp.c \
    core/ipv4/ip4_frag.c core/ipv4/ip4.c core/ipv4/ip4_addr.c netif/ethernet.c \
    core/ipv6/ethip6.c core/ipv6/icmp6.c core/ipv6/inet6.c core/ipv6/ip6.c core/ipv6/ip6_addr.c \
    core/ipv6/ip6_frag.c core/ipv6/mld6.c core/ipv6/nd6.c
LWIP_OBJS := $(patsubst %.c,$(BUILD)/lwip-obj/%.o,$(LWIP_CORE))
LWIP_LIB  := $(BUILD)/liblwip.a
# Third-party code: our flags and headers, but its warnings are not ours.
LWIP_CFLAGS := $(KFLAGS_BASE) -w $(KINC)

KERNEL_ELF := $(BUILD)/vnperf.elf

all: deps $(KERNEL_ELF) $(BUILD)/floor.elf host-tools

# QEMU's own boot floor for bench/boot_time.py: a PVH image of one page.
$(BUILD)/floor.elf: bench/floor/floor.S
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(KASFLAGS) -c $< -o $(BUILD)/obj/floor.o
	$(Q)$(LD) -nostdlib -static -z max-page-size=4096 -z noexecstack -Ttext=0x100000 \
	    -e floor_entry32 -o $@ $(BUILD)/obj/floor.o

$(BUILD)/obj/%.o: %.c | $(NEWLIB_STAMP) $(LWIP_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(KCFLAGS) -c $< -o $@

# The interrupt handler runs on the interrupted code's SSE registers
# (boot/traps.S saves only the general ones): no SSE in what it compiles to.
$(BUILD)/obj/kernel/irq.o: KCFLAGS += -mgeneral-regs-only

# lwipopts.h reaches our objects through lwIP's headers, which sit in a
# -isystem directory, and -MMD leaves out whatever a system header
# includes: state the dependency here, or a changed option leaves objects
# compiled against the old lwIP structures.
$(KOBJS): $(wildcard net/include/*.h net/include/arch/*.h)

$(BUILD)/obj/%.o: %.S
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AS      $<")
	$(Q)$(CC) $(KASFLAGS) -c $< -o $@

# Order-only: the unpacked sources are older than the stamp, which must
# not make every lwIP object out of date.
$(addprefix $(LWIP_SRC)/src/,$(LWIP_CORE)): | $(LWIP_STAMP) ;

$(BUILD)/lwip-obj/%.o: $(LWIP_SRC)/src/%.c net/include/lwipopts.h net/include/lwiphooks.h \
    | $(NEWLIB_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      lwip/$*.c")
	$(Q)$(CC) $(LWIP_CFLAGS) -c $< -o $@

$(LWIP_LIB): $(LWIP_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(KERNEL_ELF): $(KOBJS) $(LWIP_LIB) linker.ld
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(LD) -nostdlib -static -z max-page-size=4096 -z noexecstack --wrap=ip6_frag -T linker.ld \
	    -o $@ $(KOBJS) \
	    --start-group $(LWIP_LIB) $(NEWLIB_SYS)/lib/libc.a $(NEWLIB_SYS)/lib/libm.a $(LIBGCC) --end-group
	@size $@ | awk 'NR==2 {printf "  IMAGE   %s: %d bytes loaded (text %d, data %d, bss %d), file %d bytes\n", \
	    "$@", $$1+$$2+$$3, $$1, $$2, $$3, '"$$(stat -c %s $@)"'}'

# ---- host tools, unit tests, EFI: rules kept next to their code
HOSTCC     := gcc
HOSTCFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -I. -MMD -MP
host-tools:
.PHONY: host-tools
-include tools/peer/peer.mk
-include tools/rrserver/rrserver.mk
-include boot/efi/efi.mk
-include tests/unit/unit.mk
-include tests/fuzz/fuzz.mk

# ---- the README's two commands
run: all
	$(Q)$(PYTHON) tools/vnperf run --make-run

# The runner's pure-Python tests: no image, no QEMU, no build (tools/vnperf
# refuses bad options before it looks for build/, artifacts.py).
pyunit:
	$(Q)$(PYTHON) -m pytest -q -p no:cacheprovider tests/py

# fuzz-smoke: every libFuzzer harness for a few seconds, so they keep
# building and running (the long runs are make fuzz, tests/fuzz/fuzz.mk).
test: pyunit all unit fuzz-smoke passt next
	$(Q)tools/run-integration.sh

integration: all passt next
	$(Q)tools/run-integration.sh

# Long runs checked for memory drift, loss and disagreement (tools/soak.py);
# boots QEMU: on a shared machine run it under the QEMU lock.
SOAK_TIME ?= 3600
soak: all
	$(Q)SOAK_TIME=$(SOAK_TIME) $(PYTHON) tools/soak.py

# The figures of docs/bench.md's generated block, measured here (run it
# under flock /tmp/vnperf-qemu.lock); BENCH_QUICK=1: a few minutes, to test it.
BENCH_QUICK ?= 0
bench: all
	$(Q)$(PYTHON) bench/run_all.py $(if $(filter 1,$(BENCH_QUICK)),--quick)

# The Linux-guest baseline of bench/ (docs/bench.md): Debian's kernel and a
# busybox initramfs with iperf 2, fetched with apt-get download; not needed
# by `make test` (its smoke test skips without it).
linux-guest:
	$(Q)tools/fetch-linux-guest.sh $(BUILD)/linux-guest

FORMAT_SRCS = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
format:
	$(Q)clang-format -i $(FORMAT_SRCS)
format-check:
	$(Q)clang-format --dry-run --Werror $(FORMAT_SRCS)

clean:
	rm -rf $(BUILD)/obj $(BUILD)/lwip-obj $(LWIP_LIB) $(KERNEL_ELF) $(BUILD)/tests $(BUILD)/tools $(BUILD)/efi \
	    $(BUILD)/fuzz $(BUILD)/fuzz-obj

distclean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj $(BUILD)/lwip-obj $(BUILD)/tests $(BUILD)/tools $(BUILD)/efi $(BUILD)/fuzz-obj -name '*.d' 2>/dev/null)
