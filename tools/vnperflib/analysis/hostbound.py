"""Whether the host itself was the bottleneck: more runnable threads than
CPUs, so the threads being measured queued for a CPU (docs/runner-run.md,
"bottleneck"). From the run-queue waits the CPU meter reads in schedstat."""

from .. import result

# The measured threads together waited this share of the run for a CPU:
# on average at least half a thread of ours was runnable and not running.
HOST_WAIT_PCT = 50.0


def verdict(cpu):
    """A result.Verdict on the host's side when the host was CPU-bound,
    else None. cpu: the CPU meter's result.Cpu (hostcpu.CpuMeter.result),
    or None."""
    if cpu is None or cpu.wait_pct is None or cpu.wait_pct < HOST_WAIT_PCT:
        return None
    waits = sorted(((k, v.wait_pct or 0.0) for k, v in (cpu.roles or {}).items()),
                   key=lambda kv: -kv[1])
    named = ", ".join("%s %.0f%%" % kv for kv in waits if kv[1] >= 5.0)
    runnable, cpus = cpu.runnable_avg, cpu.cpus
    who = ("%.1f of the measured threads runnable on average for %d CPUs"
           % (runnable, cpus)) if runnable is not None and cpus else "threads queued"
    if runnable is not None and cpus and runnable <= cpus:
        who += " (other host processes took the rest)"
    return result.Verdict(side="host", why="%s; waiting for a CPU: %s of the run" % (who, named))
