# Host unit tests (cmocka, ASan + UBSan). One line pair per test:
#   UNIT_TESTS += test_foo
#   test_foo_SRCS := tests/unit/test_foo.c kernel/foo.c
# Kernel sources are compiled for the host with -DVN_HOST_TEST.

UNIT_CFLAGS  := -std=gnu11 -O1 -g -Wall -Wextra -Wshadow -Werror -I. -Itests/unit -DVN_HOST_TEST \
                -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -MMD -MP
UNIT_LDFLAGS := -fsanitize=address,undefined -lcmocka

UNIT_TESTS :=

UNIT_TESTS += test_config
test_config_SRCS := tests/unit/test_config.c kernel/config.c apps/app_config_keys.c

UNIT_TESTS += test_app_config
test_app_config_SRCS := tests/unit/test_app_config.c apps/app_config.c kernel/config.c \
    apps/pcap_sched.c \
    apps/app_config_keys.c tests/unit/stub_apps.c apps/rate.c apps/imix.c apps/flows.c \
    apps/reneg_sets.c drivers/virtio/vnet_features.c drivers/virtio/vnet_notify_cfg.c

UNIT_TESTS += test_esc
test_esc_SRCS := tests/unit/test_esc.c kernel/esc.c

UNIT_TESTS += test_exitcodes
test_exitcodes_SRCS := tests/unit/test_exitcodes.c kernel/exit_codes.c

UNIT_TESTS += test_json
test_json_SRCS := tests/unit/test_json.c kernel/json.c

UNIT_TESTS += test_mem_arena
test_mem_arena_SRCS := tests/unit/test_mem_arena.c kernel/mem_arena.c

UNIT_TESTS += test_pkt
test_pkt_SRCS := tests/unit/test_pkt.c net/pkt.c kernel/csum.c

UNIT_TESTS += test_pkt_reflect
test_pkt_reflect_SRCS := tests/unit/test_pkt_reflect.c net/pkt.c kernel/csum.c

UNIT_TESTS += test_csum
test_csum_SRCS := tests/unit/test_csum.c kernel/csum.c

UNIT_TESTS += test_vnet_hdr
test_vnet_hdr_SRCS := tests/unit/test_vnet_hdr.c drivers/virtio/vnet_hdr.c kernel/csum.c

UNIT_TESTS += test_vnet_hash
test_vnet_hash_SRCS := tests/unit/test_vnet_hash.c drivers/virtio/vnet_hash.c \
    drivers/virtio/vnet_rss.c drivers/virtio/vnet_toeplitz.c

UNIT_TESTS += test_net_off
test_net_off_SRCS := tests/unit/test_net_off.c net/net_off.c drivers/virtio/vnet_hdr.c kernel/csum.c

UNIT_TESTS += test_vnet_rss
test_vnet_rss_SRCS := tests/unit/test_vnet_rss.c drivers/virtio/vnet_rss.c \
    drivers/virtio/vnet_toeplitz.c

UNIT_TESTS += test_hist
test_hist_SRCS := tests/unit/test_hist.c apps/hist.c apps/hist_json.c kernel/json.c

UNIT_TESTS += test_rate
test_rate_SRCS := tests/unit/test_rate.c apps/rate.c

UNIT_TESTS += test_seqtrack
test_seqtrack_SRCS := tests/unit/test_seqtrack.c apps/seqtrack.c

UNIT_TESTS += test_qstats
test_qstats_SRCS := tests/unit/test_qstats.c apps/qstats.c apps/seqtrack.c kernel/json.c net/pkt.c \
    kernel/csum.c

UNIT_TESTS += test_rr_result
test_rr_result_SRCS := tests/unit/test_rr_result.c apps/rr_result.c apps/hist.c kernel/json.c

UNIT_TESTS += test_rr_req
test_rr_req_SRCS := tests/unit/test_rr_req.c apps/rr_req.c net/pkt.c kernel/csum.c

UNIT_TESTS += test_stall
test_stall_SRCS := tests/unit/test_stall.c apps/stall.c kernel/json.c

UNIT_TESTS += test_iperf_sess
test_iperf_sess_SRCS := tests/unit/test_iperf_sess.c apps/iperf_sess.c

# lwIP's own ethernet.c around the VLAN hooks, with our lwipopts.h (its
# warnings are not ours).
UNIT_TESTS += test_netif_vlan
test_netif_vlan_SRCS := tests/unit/test_netif_vlan.c net/netif_vlan.c net/net_vlan.c \
    $(LWIP_SRC)/src/netif/ethernet.c
UNIT_LWIP_OBJS := $(patsubst %.c,$(BUILD)/tests/unit-obj/%.o,$(test_netif_vlan_SRCS))
$(UNIT_LWIP_OBJS): UNIT_CFLAGS += -isystem net/include -isystem $(LWIP_SRC)/src/include
$(UNIT_LWIP_OBJS): net/include/lwipopts.h net/include/lwiphooks.h
$(BUILD)/tests/unit-obj/$(LWIP_SRC)/src/netif/ethernet.o: UNIT_CFLAGS += -w

UNIT_TESTS += test_net_svlan
test_net_svlan_SRCS := tests/unit/test_net_svlan.c net/net_vlan.c

UNIT_TESTS += test_net_rwnd
test_net_rwnd_SRCS := tests/unit/test_net_rwnd.c

UNIT_TESTS += test_imix
test_imix_SRCS := tests/unit/test_imix.c apps/imix.c apps/flows.c

UNIT_TESTS += test_reneg_sets
test_reneg_sets_SRCS := tests/unit/test_reneg_sets.c apps/reneg_sets.c \
    drivers/virtio/vnet_features.c

UNIT_TESTS += test_reneg_rx
test_reneg_rx_SRCS := tests/unit/test_reneg_rx.c apps/reneg_rx.c apps/seqtrack.c net/pkt.c \
    kernel/csum.c kernel/json.c

UNIT_TESTS += test_reneg_uso
test_reneg_uso_SRCS := tests/unit/test_reneg_uso.c apps/reneg_uso.c net/pkt.c kernel/csum.c

UNIT_TESTS += test_stream_spec
test_stream_spec_SRCS := tests/unit/test_stream_spec.c apps/stream_spec.c kernel/config.c

UNIT_TESTS += test_stream_frame
test_stream_frame_SRCS := tests/unit/test_stream_frame.c apps/stream_frame.c apps/stream_spec.c \
    kernel/config.c net/pkt.c kernel/csum.c

UNIT_TESTS += test_stream_fast
test_stream_fast_SRCS := tests/unit/test_stream_fast.c apps/stream_fast.c apps/stream_frame.c \
    net/pkt.c kernel/csum.c

UNIT_TESTS += test_stream_flows
test_stream_flows_SRCS := tests/unit/test_stream_flows.c apps/stream_flows.c apps/stream_fast.c \
    apps/stream_frame.c apps/stream_spec.c apps/stream_size.c apps/flows.c apps/imix.c \
    kernel/config.c net/pkt.c kernel/csum.c

UNIT_TESTS += test_stream_sched
test_stream_sched_SRCS := tests/unit/test_stream_sched.c apps/stream_sched.c

UNIT_TESTS += test_efi_elf
test_efi_elf_SRCS := tests/unit/test_efi_elf.c boot/efi/efi_elf.c

UNIT_TESTS += test_efi_memmap
test_efi_memmap_SRCS := tests/unit/test_efi_memmap.c boot/efi/efi_memmap.c

UNIT_TESTS += test_efi_cmdline
test_efi_cmdline_SRCS := tests/unit/test_efi_cmdline.c boot/efi/efi_cmdline.c

VIRTQ_SRCS := drivers/virtio/dma_pool.c drivers/virtio/virtq.c drivers/virtio/virtq_split.c drivers/virtio/virtq_packed.c
SIM_SRCS   := tests/unit/sim_virtio.c tests/unit/sim_queue.c tests/unit/sim_irq.c

UNIT_TESTS += test_virtq
test_virtq_SRCS := tests/unit/test_virtq.c $(VIRTQ_SRCS) $(SIM_SRCS)

UNIT_TESTS += test_hostile
test_hostile_SRCS := tests/unit/test_hostile.c tests/unit/sim_check.c $(VIRTQ_SRCS) $(SIM_SRCS) \
    drivers/virtio/virtq_raw.c apps/hostile_cases.c apps/hostile_ring.c apps/hostile_desc.c \
    apps/hostile_hdr.c apps/hostile_setup.c apps/hostile_ctrl.c apps/hostile_queue.c \
    apps/hostile_packed.c drivers/virtio/vnet_toeplitz.c

UNIT_TESTS += test_vnet
VNET_SIM_SRCS := $(SIM_SRCS) $(VIRTQ_SRCS) drivers/virtio/vnet_dev.c drivers/virtio/vnet_rx.c \
    drivers/virtio/vnet_tx.c drivers/virtio/vnet_txslots.c drivers/virtio/vnet_txburst.c \
    drivers/virtio/vnet_stats.c drivers/virtio/vnet_features.c drivers/virtio/vnet_hdr.c \
    drivers/virtio/vnet_notify.c drivers/virtio/vnet_notify_cfg.c drivers/virtio/vnet_ctrl.c \
    drivers/virtio/vnet_mq.c drivers/virtio/vnet_rss.c drivers/virtio/vnet_toeplitz.c \
    drivers/virtio/vnet_hash.c drivers/virtio/vnet_ctrl_cmds.c drivers/virtio/vnet_coal.c \
    drivers/virtio/vnet_qreset.c drivers/virtio/vnet_counts.c kernel/csum.c kernel/json.c

test_vnet_SRCS := tests/unit/test_vnet.c $(VNET_SIM_SRCS)

UNIT_TESTS += test_vnet_mq
test_vnet_mq_SRCS := tests/unit/test_vnet_mq.c $(VNET_SIM_SRCS)

UNIT_TESTS += test_vnet_hashrep
test_vnet_hashrep_SRCS := tests/unit/test_vnet_hashrep.c $(VNET_SIM_SRCS)

UNIT_TESTS += test_vnet_qreset
test_vnet_qreset_SRCS := tests/unit/test_vnet_qreset.c $(VNET_SIM_SRCS)

UNIT_TESTS += test_vnet_reneg
test_vnet_reneg_SRCS := tests/unit/test_vnet_reneg.c $(VNET_SIM_SRCS)

UNIT_TESTS += test_vnet_ndata
test_vnet_ndata_SRCS := tests/unit/test_vnet_ndata.c $(VNET_SIM_SRCS)

UNIT_TESTS += test_vnet_ctrl_cmds
test_vnet_ctrl_cmds_SRCS := tests/unit/test_vnet_ctrl_cmds.c $(VNET_SIM_SRCS)

UNIT_TESTS += test_vnet_coal
test_vnet_coal_SRCS := tests/unit/test_vnet_coal.c $(VNET_SIM_SRCS)

UNIT_TESTS += test_vnet_uso
test_vnet_uso_SRCS := tests/unit/test_vnet_uso.c $(VNET_SIM_SRCS)

UNIT_TESTS += test_vnet_offload
test_vnet_offload_SRCS := tests/unit/test_vnet_offload.c \
    $(filter-out tests/unit/test_vnet.c,$(test_vnet_SRCS))

UNIT_TESTS += test_vnet_offload_packed
test_vnet_offload_packed_SRCS := tests/unit/test_vnet_offload_packed.c \
    $(filter-out tests/unit/test_vnet_offload.c,$(test_vnet_offload_SRCS))

UNIT_TESTS += test_vnet_packed
test_vnet_packed_SRCS := tests/unit/test_vnet_packed.c \
    $(filter-out tests/unit/test_vnet.c,$(test_vnet_SRCS))

UNIT_TESTS += test_vnet_txslots
test_vnet_txslots_SRCS := tests/unit/test_vnet_txslots.c $(VNET_SIM_SRCS)

UNIT_TESTS += test_vnet_notify
test_vnet_notify_SRCS := tests/unit/test_vnet_notify.c $(VNET_SIM_SRCS)

UNIT_TESTS += test_vnet_txslots_packed
test_vnet_txslots_packed_SRCS := tests/unit/test_vnet_txslots_packed.c \
    $(filter-out tests/unit/test_vnet_txslots.c,$(test_vnet_txslots_SRCS))

UNIT_TESTS += test_fwcfg_dir
test_fwcfg_dir_SRCS := tests/unit/test_fwcfg_dir.c kernel/fwcfg_dir.c

UNIT_TESTS += test_virtio_mmio_cmdline
test_virtio_mmio_cmdline_SRCS := tests/unit/test_virtio_mmio_cmdline.c \
    drivers/virtio/virtio_mmio_cmdline.c

UNIT_TESTS += test_acpi_walk
test_acpi_walk_SRCS := tests/unit/test_acpi_walk.c kernel/acpi_walk.c

UNIT_TESTS += test_irq
test_irq_SRCS := tests/unit/test_irq.c kernel/madt.c kernel/pci_msix.c

UNIT_TESTS += test_smp
test_smp_SRCS := tests/unit/test_smp.c kernel/smp_plan.c

UNIT_TESTS += test_tsc_freq
test_tsc_freq_SRCS := tests/unit/test_tsc_freq.c kernel/tsc_freq.c kernel/pvclock.c

UNIT_TESTS += test_tsc_cal
test_tsc_cal_SRCS := tests/unit/test_tsc_cal.c kernel/tsc_cal.c

UNIT_TESTS += test_peer_args
test_peer_args_SRCS := tests/unit/test_peer_args.c tools/peer/peer_args.c tools/peer/peer_malform.c \
    net/pkt.c kernel/csum.c

UNIT_TESTS += test_peer_frame
test_peer_frame_SRCS := tests/unit/test_peer_frame.c tools/peer/peer_frame.c \
    tools/peer/peer_malform.c net/pkt.c kernel/csum.c

UNIT_TESTS += test_peer_streams
test_peer_streams_SRCS := tests/unit/test_peer_streams.c tools/peer/peer_streams.c apps/seqtrack.c

UNIT_TESTS += test_peer_flows
test_peer_flows_SRCS := tests/unit/test_peer_flows.c tools/peer/peer_flows.c tools/peer/peer_stats.c \
    tools/peer/peer_frame.c tools/peer/peer_streams.c tools/peer/peer_lat.c apps/seqtrack.c \
    apps/hist.c net/pkt.c kernel/csum.c

UNIT_TESTS += test_peer_gen
test_peer_gen_SRCS := tests/unit/test_peer_gen.c tools/peer/peer_gen.c apps/stream_spec.c \
    apps/stream_frame.c apps/stream_sched.c apps/stream_size.c apps/imix.c apps/rate.c \
    kernel/config.c net/pkt.c kernel/csum.c

UNIT_TESTS += test_peer_lat
test_peer_lat_SRCS := tests/unit/test_peer_lat.c tools/peer/peer_lat.c apps/hist.c

UNIT_TESTS += test_peer_tx
test_peer_tx_SRCS := tests/unit/test_peer_tx.c tools/peer/peer_tx.c tools/peer/peer_stats.c \
    tools/peer/peer_frame.c tools/peer/peer_malform.c tools/peer/peer_streams.c \
    tools/peer/peer_flows.c tools/peer/peer_lat.c apps/seqtrack.c apps/hist.c net/pkt.c kernel/csum.c

UNIT_TESTS += test_virtio_pci
test_virtio_pci_SRCS := tests/unit/test_virtio_pci.c drivers/virtio/virtio_pci_modern.c \
    kernel/pci_cap.c tests/unit/sim_pci.c $(VIRTQ_SRCS) $(SIM_SRCS)

UNIT_TESTS += test_rrs
test_rrs_SRCS := tests/unit/test_rrs.c tools/rrserver/rrs_args.c tools/rrserver/rrs_req.c

UNIT_TESTS += test_pcap_blob
test_pcap_blob_SRCS := tests/unit/test_pcap_blob.c apps/pcap_blob.c

UNIT_TESTS += test_pcap_sched
test_pcap_sched_SRCS := tests/unit/test_pcap_sched.c apps/pcap_sched.c apps/rate.c

define unit_test_rule
$(BUILD)/tests/unit/$(1): $$(patsubst %.c,$(BUILD)/tests/unit-obj/%.o,$$($(1)_SRCS))
	@mkdir -p $$(dir $$@)
	@$$(if $$(Q),echo "  LINK    $$@")
	$$(Q)$$(HOSTCC) -o $$@ $$^ $$(UNIT_LDFLAGS)
endef
$(foreach t,$(UNIT_TESTS),$(eval $(call unit_test_rule,$(t))))

$(BUILD)/tests/unit-obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  HOSTCC  $<")
	$(Q)$(HOSTCC) $(UNIT_CFLAGS) -c $< -o $@

UNIT_BINS := $(addprefix $(BUILD)/tests/unit/,$(UNIT_TESTS))

unit: deps $(UNIT_BINS)
	$(Q)fail=0; for t in $(UNIT_BINS); do $$t || fail=1; done; exit $$fail
.PHONY: unit
