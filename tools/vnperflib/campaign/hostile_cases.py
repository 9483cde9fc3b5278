"""The catalogue of app=hostile as the runner knows it: names in the
guest's order (apps/hostile_cases.c; tests/py/test_hostile.py checks the
two agree) and the rule each breaks, for cases whose guest line never
came (QEMU died first)."""

# (name, rule broken, whether the device is meant to use the case's buffer:
# False where the case's kick cannot reach the queue or it leaves none; RX
# where the device meets it only when a frame comes to the guest; NEVER
# where the case's descriptor is not available and the device must not use
# it, virtio 1.2 s2.8.15)
RX = "rx"
NEVER = "never"

# The packed ring's cases (s2.8): each runs with the packed ring offered
# (hostile.packed_args); on a device that does not offer it, not-offered
# (NEEDS).
PACKED_CASES = (
    ("packed_wrap_wrong", "s2.8.1 (AVAIL is the driver's wrap counter, USED its inverse)", NEVER),
    ("packed_flags_used", "s2.8.1 (AVAIL and USED differ in an available descriptor)", NEVER),
    ("packed_chain_wrap", "s2.8.6 (every descriptor of a list made available)", True),
    ("packed_id_twice", "s2.8.21.1 (each buffer gets a free buffer id)", True),
    ("packed_chain_loop", "s2.8.17 (no list longer than the queue size)", True),
    ("packed_ind_next", "s2.8.19 (no INDIRECT in a list linked by NEXT)", True),
    ("packed_ind_chain", "s2.8.19 (no INDIRECT after a direct descriptor)", True),
    ("packed_ind_nested", "s2.8.19 (only WRITE in a table: no INDIRECT)", True),
    ("packed_ind_flags", "s2.8.19 (only WRITE in a table: no NEXT)", True),
    ("packed_ind_len16", "s2.8.7 (a table of len/16 descriptors)", True),
    ("packed_ind_len0", "s2.8.7 (a table of len/16 descriptors)", True),
    ("packed_event_flags", "s2.8.10 (event flags 0x3 are reserved)", True),
    ("packed_event_off", "s2.8.10 (a descriptor event inside the ring)", True),
    ("packed_dev_event", "s2.8.10 (the device event suppression structure is the device's)",
     True),
)

CASES = (
    ("chain_loop", "s2.7.5.2 (no loops in a chain)", True),
    ("chain_long", "s2.7.5.3.1 (no chain longer than the queue size)", True),
    ("head_range", "s2.7.6 (ring entries name a descriptor of the table)", True),
    ("head_twice", "s2.7.13.2 (only free chains are made available)", True),
    ("avail_ahead", "s2.7.6 (at most queue size entries available)", True),
    ("avail_back", "s2.7.6.1 (the driver MUST NOT decrement avail idx)", True),
    ("used_event_far", "s2.7.10 (used_event: any 16-bit value)", True),
    ("avail_event_write", "s2.7.10 (avail_event is the device's to write)", True),
    ("addr_beyond_ram", "s2.7.5 (addr: guest memory)", True),
    ("addr_mmio", "s2.7.5 (addr: guest memory, not a device's MMIO)", True),
    ("addr_wrap", "s2.7.5 (a buffer inside the address space)", True),
    ("len_zero", "s2.7.5 (an element of 0 bytes)", True),
    ("len_max", "s2.7.5.2 (len 2^32-1: past the buffer and guest memory)", True),
    ("write_on_tx", "s5.1.6.2 (transmit buffers are device-readable)", True),
    ("read_on_rx", "s5.1.6.3 (receive buffers are device-writable)", RX),
    ("ind_next", "s2.7.5.3.1 (not both INDIRECT and NEXT)", True),
    ("ind_nested", "s2.7.5.3.1 (no INDIRECT inside a table)", True),
    ("ind_len16", "s2.7.5.3 (a table of len/16 descriptors)", True),
    ("ind_len0", "s2.7.5.3 (a table of len/16 descriptors)", True),
    ("gso_hdrlen", "s5.1.6.2.1 (hdr_len: the headers' length)", True),
    ("gso_size0", "s5.1.6.2.1 (gso_size: the MSS)", True),
    ("csum_past", "s5.1.6.2.1 (csum_start, csum_offset inside the frame)", True),
    ("num_buffers_tx", "s5.1.6.2.1 (num_buffers is 0 on transmit)", True),
    ("runt", "s5.1.6.2 (a frame of 10 bytes: no Ethernet header)", True),
    ("over_mtu", "s5.1.4.1 (no frame past the MTU without GSO)", True),
    ("gso_64k", "s5.1.6.2 (a GSO frame past 64 KiB)", True),
    ("notify_storm", "s2.7.13.4 (10^6 notifications in a second: allowed, a load)", True),
    ("notify_bad_queue", "s4.2.2 (QueueNotify: a queue the device has)", False),
    ("notify_disabled_queue", "s4.1.4.3, s4.2.2 (notify only a queue the driver enabled)", True),
    ("features_unoffered", "s2.2.1 (only offered features are accepted)", False),
    ("features_after_ok", "s3.1.1 (features are set before FEATURES_OK)", True),
    ("reset_inflight", "s2.4 (a reset may come with buffers in flight)", False),
    ("queue_size_bad", "s4.2.2.2 (QueueNum at most QueueNumMax)", False),
    ("ctrl_class_unknown", "s5.1.6.5 (class: one the device has)", True),
    ("ctrl_cmd_unknown", "s5.1.6.5.1 (command: one its class has)", True),
    ("ctrl_short", "s5.1.6.5.1 (PROMISC carries its one byte)", True),
    ("ctrl_no_ack", "s5.1.6.5 (the ack: a device-writable byte after the data)", True),
    ("ctrl_ack_ro", "s2.7.4, s5.1.6.5 (the ack device-writable, not readable)", True),
    ("ctrl_mq_pairs0", "s5.1.6.5.5 (VQ_PAIRS_SET: 1..max_virtqueue_pairs)", True),
    ("ctrl_mq_pairs_over", "s5.1.6.5.5 (VQ_PAIRS_SET: 1..max_virtqueue_pairs)", True),
    ("rss_queue_missing", "s5.1.6.5.7.1 (indirection_table: enabled receive queues)", True),
    ("rss_table_len", "s5.1.6.5.7.1 (indirection_table_mask + 1: a power of two)", True),
    ("notif_data_ahead", "s2.9, s4.1.5.2 (next_idx: the next avail index)", True),
    ("notif_data_behind", "s2.9, s4.1.5.2 (next_idx: the next avail index)", False),
    ("qreset_active", "s2.6.1, s4.1.4.3.2 (a queue reset with frames in flight: allowed)", True),
    ("qreset_size_bad", "s2.6.1.2, s4.1.4.3.2 (a re-enabled queue's size at most the maximum)",
     False),
) + PACKED_CASES

# The features a case needs negotiated, by the guest's names (its line's
# "needs"); without them the guest does nothing and says not offered.
NEEDS = {
    "ctrl_class_unknown": ("ctrl_vq",),
    "ctrl_cmd_unknown": ("ctrl_vq", "ctrl_rx"),
    "ctrl_short": ("ctrl_vq", "ctrl_rx"),
    "ctrl_no_ack": ("ctrl_vq", "ctrl_rx"),
    "ctrl_ack_ro": ("ctrl_vq", "ctrl_rx"),
    "ctrl_mq_pairs0": ("ctrl_vq", "mq"),
    "ctrl_mq_pairs_over": ("ctrl_vq", "mq"),
    "rss_queue_missing": ("ctrl_vq", "rss"),
    "rss_table_len": ("ctrl_vq", "rss"),
    "notif_data_ahead": ("notification_data",),
    "notif_data_behind": ("notification_data",),
    "qreset_active": ("ring_reset",),
    "qreset_size_bad": ("ring_reset",),
    **{c[0]: ("ring_packed",) for c in PACKED_CASES},
}

# Guest words a case boots with (after case=NAME). notify_disabled_queue
# needs a queue the device has and the driver leaves disabled: QEMU's
# virtio-net has its control queue whether or not CTRL_VQ is negotiated,
# so the driver negotiates it away and leaves that queue off; the guest
# finds the queue itself (a device with no such queue: not offered, and
# the guest's line says why).
GUEST_WORDS = {"notify_disabled_queue": ("features=-ctrl_vq",)}

NAMES = tuple(c[0] for c in CASES)
SPEC = {c[0]: c[1] for c in CASES}
USES_BUFFER = {c[0]: c[2] for c in CASES}
PACKED = frozenset(c[0] for c in PACKED_CASES)


def select(text):
    """The cases --case names: all, or a comma list of known names (in the
    order given). ValueError with the first unknown name."""
    if text == "all":
        return list(NAMES)
    names = text.split(",")
    for n in names:
        if n not in SPEC:
            raise ValueError("--case %r: no such case (vnperf hostile --list names them; or all)"
                             % n)
    return names
