# vnperf-rrserver: the host end of app=rr over tap (docs/runner-run.md).
RRS_SRCS := $(wildcard tools/rrserver/*.c)
RRS_OBJS := $(patsubst %.c,$(BUILD)/tools/rrserver-obj/%.o,$(RRS_SRCS))
RRS_BIN  := $(BUILD)/tools/vnperf-rrserver

host-tools: $(RRS_BIN)

$(RRS_BIN): $(RRS_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  HOSTLD  $@")
	$(Q)$(HOSTCC) -o $@ $^

$(BUILD)/tools/rrserver-obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  HOSTCC  $<")
	$(Q)$(HOSTCC) $(HOSTCFLAGS) -c $< -o $@

