# libFuzzer harnesses (Debian clang + libfuzzer-14-dev), ASan + UBSan; the
# code under test also gets -fsanitize=integer (unsigned wrap, truncating
# and sign-changing conversions), which the other sanitizers do not see.
#   make fuzz          each harness for FUZZ_TIME seconds (FUZZ=name: one)
#   make fuzz-smoke    each for FUZZ_SMOKE_TIME seconds (part of make test)
# Seeds are committed in tests/fuzz/seeds/NAME; the growing corpus and any
# crash land in $(BUILD)/fuzz. Source lists follow tests/unit/unit.mk.

FUZZ_CC         ?= clang
FUZZ_TIME       ?= 300
FUZZ_SMOKE_TIME ?= 2
FUZZ_BASE := -std=gnu11 -O1 -g -I. -Itests/unit -DVN_HOST_TEST -fno-omit-frame-pointer -MMD -MP \
             -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_INT  := -fsanitize=integer

# The virtqueue's 16-bit free-running indices wrap by design (virtio 1.2
# s2.7.6, s2.8.1): truncation back to 16 bits is not instrumented there;
# fuzz_virtq checks those indices against its model across 2^16 instead.
$(BUILD)/fuzz-obj/drivers/virtio/virtq%.o: FUZZ_INT := -fsanitize=integer \
    -fno-sanitize=implicit-integer-truncation

FUZZERS :=
unit_srcs = $(filter-out tests/unit/test_%,$($(1)_SRCS))

FUZZERS += fuzz_config
fuzz_config_SRCS := $(call unit_srcs,test_config)
FUZZERS += fuzz_hostile_case
fuzz_hostile_case_SRCS := $(call unit_srcs,test_hostile)
FUZZERS += fuzz_uint
fuzz_uint_SRCS := $(call unit_srcs,test_config)
FUZZERS += fuzz_rate
fuzz_rate_SRCS := $(call unit_srcs,test_rate)
FUZZERS += fuzz_imix
fuzz_imix_SRCS := apps/imix.c
FUZZERS += fuzz_pcap_blob
fuzz_pcap_blob_SRCS := apps/pcap_blob.c
FUZZERS += fuzz_stream_spec
fuzz_stream_spec_SRCS := apps/stream_spec.c kernel/config.c
FUZZERS += fuzz_flows
fuzz_flows_SRCS := apps/flows.c
FUZZERS += fuzz_features
fuzz_features_SRCS := drivers/virtio/vnet_features.c
FUZZERS += fuzz_net_off
fuzz_net_off_SRCS := net/net_off.c
FUZZERS += fuzz_vnet_hdr
fuzz_vnet_hdr_SRCS := $(call unit_srcs,test_vnet_hdr)
FUZZERS += fuzz_pkt
fuzz_pkt_SRCS := $(call unit_srcs,test_pkt)
FUZZERS += fuzz_seqtrack
fuzz_seqtrack_SRCS := $(call unit_srcs,test_seqtrack)
FUZZERS += fuzz_efi_elf
fuzz_efi_elf_SRCS := $(call unit_srcs,test_efi_elf)
FUZZERS += fuzz_efi_cmdline
fuzz_efi_cmdline_SRCS := $(call unit_srcs,test_efi_cmdline)
FUZZERS += fuzz_peer_args
fuzz_peer_args_SRCS := $(call unit_srcs,test_peer_args)
FUZZERS += fuzz_json
fuzz_json_SRCS := $(call unit_srcs,test_json)
FUZZERS += fuzz_rrs_args
fuzz_rrs_args_SRCS := tools/rrserver/rrs_args.c
FUZZERS += fuzz_rrs_req
fuzz_rrs_req_SRCS := tools/rrserver/rrs_req.c
FUZZERS += fuzz_virtq
fuzz_virtq_SRCS := $(VIRTQ_SRCS) $(SIM_SRCS) tests/fuzz/fuzz_virtq_dev.c
FUZZERS += fuzz_vnet_rx
fuzz_vnet_rx_SRCS := $(VNET_SIM_SRCS)
FUZZERS += fuzz_vnet_hash
fuzz_vnet_hash_SRCS := $(call unit_srcs,test_vnet_hash)
FUZZERS += fuzz_vnet_ctrl
fuzz_vnet_ctrl_SRCS := $(VNET_SIM_SRCS)
FUZZERS += fuzz_virtio_pci
fuzz_virtio_pci_SRCS := drivers/virtio/virtio_pci_modern.c kernel/pci_cap.c tests/unit/sim_pci.c \
    $(VIRTQ_SRCS) $(SIM_SRCS)
FUZZERS += fuzz_fwcfg_dir
fuzz_fwcfg_dir_SRCS := kernel/fwcfg_dir.c
FUZZERS += fuzz_virtio_mmio_cmdline
fuzz_virtio_mmio_cmdline_SRCS := drivers/virtio/virtio_mmio_cmdline.c
FUZZERS += fuzz_acpi
fuzz_acpi_SRCS := kernel/acpi_walk.c kernel/madt.c

define fuzz_rule
$(BUILD)/fuzz/$(1): $(BUILD)/fuzz-obj/tests/fuzz/$(1).o \
        $$(patsubst %.c,$(BUILD)/fuzz-obj/%.o,$$($(1)_SRCS))
	@mkdir -p $$(dir $$@)
	@$$(if $$(Q),echo "  FUZZLD  $$@")
	$$(Q)$$(FUZZ_CC) $$(FUZZ_BASE) -o $$@ $$^
endef
$(foreach f,$(FUZZERS),$(eval $(call fuzz_rule,$(f))))

# The harness itself: no integer sanitizer (its models wrap on purpose),
# nor on the simulated device that fuzz_virtq drives (the harness's side).
$(BUILD)/fuzz-obj/tests/fuzz/%.o: tests/fuzz/%.c tests/fuzz/fuzz.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_BASE) -c $< -o $@

$(BUILD)/fuzz-obj/tests/unit/sim_%.o: tests/unit/sim_%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_BASE) -c $< -o $@

$(BUILD)/fuzz-obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_BASE) $(FUZZ_INT) -c $< -o $@

FUZZ ?= $(FUZZERS)
FUZZ_BINS := $(addprefix $(BUILD)/fuzz/,$(FUZZ))
fuzz-build: deps $(FUZZ_BINS)
# The runner's parsers: seeded random-input harnesses (tests/py/mutator.py),
# PYFUZZ_N inputs each; `make pyunit` runs them with a small count.
PYFUZZ_N ?= 100000
fuzz: fuzz-build
	$(Q)tools/fuzz-run.sh $(BUILD)/fuzz $(FUZZ_TIME) $(FUZZ)
	$(Q)VNPERF_PYFUZZ_N=$(PYFUZZ_N) $(PYTHON) -m pytest -q -p no:cacheprovider tests/py -k pyfuzz
fuzz-smoke: fuzz-build
	$(Q)tools/fuzz-run.sh $(BUILD)/fuzz $(FUZZ_SMOKE_TIME) $(FUZZ)
.PHONY: fuzz fuzz-build fuzz-smoke
