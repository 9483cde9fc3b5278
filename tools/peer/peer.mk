# vnperf-peer: host-side peer for QEMU -netdev dgram / socket,udp= (docs/peer.md).
# net/pkt.c and apps/seqtrack.c are the guest's own frame format and loss
# accounting, apps/stream_*.c its stream engine (send --stream-file), built
# for the host so both ends agree by construction.
# vnperf-peer-dpdk is the same peer over DPDK net_vhost ports (libdpdk-dev):
# every file but its own transport and main is shared.
PEER_DPDK_ONLY := tools/peer/peer_dpdk.c tools/peer/peer_dpdk_main.c
PEER_COMMON    := $(filter-out tools/peer/peer_main.c $(PEER_DPDK_ONLY),$(wildcard tools/peer/*.c)) \
                  net/pkt.c kernel/csum.c apps/seqtrack.c apps/hist.c \
                  apps/stream_spec.c apps/stream_frame.c apps/stream_sched.c apps/stream_size.c \
                  apps/imix.c apps/rate.c kernel/config.c
PEER_OBJS      := $(patsubst %.c,$(BUILD)/tools/peer-obj/%.o,$(PEER_COMMON) tools/peer/peer_main.c)
PEER_DPDK_OBJS := $(patsubst %.c,$(BUILD)/tools/peer-obj/%.o,$(PEER_COMMON) $(PEER_DPDK_ONLY))
PEER_BIN       := $(BUILD)/tools/vnperf-peer
PEER_DPDK_BIN  := $(BUILD)/tools/vnperf-peer-dpdk
# DPDK's headers as system headers, so -Werror stays on for ours.
DPDK_CFLAGS     = $(patsubst -I%,-isystem %,$(shell pkg-config --cflags libdpdk))
DPDK_LIBS       = $(shell pkg-config --libs libdpdk)

host-tools: $(PEER_BIN) $(PEER_DPDK_BIN)

$(PEER_BIN): $(PEER_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  HOSTLD  $@")
	$(Q)$(HOSTCC) -pthread -o $@ $^

$(PEER_DPDK_BIN): $(PEER_DPDK_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  HOSTLD  $@")
	$(Q)$(HOSTCC) -o $@ $^ $(DPDK_LIBS)

$(patsubst %.c,$(BUILD)/tools/peer-obj/%.o,$(PEER_DPDK_ONLY)): HOSTCFLAGS += $(DPDK_CFLAGS)

$(BUILD)/tools/peer-obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  HOSTCC  $<")
	$(Q)$(HOSTCC) $(HOSTCFLAGS) -c $< -o $@
