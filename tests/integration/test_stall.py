"""The guest's own account of the time its vCPU did not run (apps/stall.h,
issue 16): a QEMU stopped with SIGSTOP for STOP_S while the sink
busy-polls shows as one stall of at least that long, its sample lines as
its own pauses; the same run without it, and a sink that halts on
purpose (notify=irq), show no such stall."""

import os
import signal
import time

import vnharness
from test_apps import has_text, make_guest, result_of, wait_line
from vnperflib.run import guest, qemucmd

MAC = "52:54:00:00:02:01"
STOP_S = 0.06


def sink_stalls(words, stop_s=None):
    """The "stalls" of a sink's result after 2 s of polling an idle wire,
    its QEMU stopped for stop_s seconds half a second in."""
    q, p = vnharness.free_udp_ports(2)
    g = make_guest(["app=sink", "duration=2"] + words,
                   [qemucmd.Nic(vnharness.dgram_netdev(q, p), MAC)])
    with vnharness.Session() as s:
        g.start(s)
        assert wait_line(g, has_text("sink: waiting"), 30), g.console.text()
        time.sleep(0.5)
        if stop_s:
            os.kill(g.pid, signal.SIGSTOP)
            time.sleep(stop_s)
            os.kill(g.pid, signal.SIGCONT)
        guest.pump([g], 30)
    b, res = result_of(g)
    assert b.code == 0, b.console
    assert isinstance(res.get("stalls"), dict), res
    return res["stalls"]


def test_sink_reports_a_stopped_vcpu_as_a_stall():
    st = sink_stalls(["notify=poll"], STOP_S)
    assert st["threshold_us"] == 1000
    assert st["max_us"] >= 50000 and st["over_1ms"] >= 1, st
    assert st["stalled_ms"] >= 50, st
    # The sample line at 1 s: the sink's own pause, kept apart.
    assert st["pause_max_us"] > 0 and st["paused_ms"] > 0, st
    calm = sink_stalls(["notify=poll"])
    # The host may still take the vCPU away for a timeslice or two.
    assert calm["max_us"] < st["max_us"] / 2, (calm, st)


def test_sink_halts_on_purpose_are_no_stall():
    """notify=irq: the idle sink halts until each 1 s sample; none of it
    counts."""
    st = sink_stalls(["notify=irq"])
    assert st["max_us"] < 50000, st
