# vnperf-peer: host-side peer for QEMU -netdev dgram / socket,udp= (docs/peer.md).
# net/pkt.c and apps/seqtrack.c are the guest's own frame format and loss
# accounting, built for the host so both ends agree by construction.
PEER_SRCS := $(wildcard tools/peer/*.c) net/pkt.c kernel/csum.c apps/seqtrack.c apps/hist.c
PEER_OBJS := $(patsubst %.c,$(BUILD)/tools/peer-obj/%.o,$(PEER_SRCS))
PEER_BIN  := $(BUILD)/tools/vnperf-peer

host-tools: $(PEER_BIN)

$(PEER_BIN): $(PEER_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  HOSTLD  $@")
	$(Q)$(HOSTCC) -o $@ $^

$(BUILD)/tools/peer-obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  HOSTCC  $<")
	$(Q)$(HOSTCC) $(HOSTCFLAGS) -c $< -o $@
