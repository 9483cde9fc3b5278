"""Guest exit codes (kernel/exit.h) and the runner's own statuses.

The guest writes its code to isa-debug-exit; QEMU then exits with
(code << 1) | 1. The runner returns the guest's code as its own status, and
uses codes from 64 up for what went wrong on the host side, so the two never
collide."""

GUEST_CODES = {
    0: "ok",
    1: "test failed",
    2: "config error",
    3: "fault",
    4: "device error",
    5: "out of memory",
    6: "no device",
    7: "internal error",
    8: "timeout",
    9: "network error (peer unreachable)",
    10: "cpu error (an application processor did not start)",
}
GUEST_TEST_FAILED = 1
GUEST_CONFIG_ERROR = 2      # the guest refused its config before its app ran

RUNNER_USAGE = 64            # bad runner options
RUNNER_TIMEOUT = 65          # --timeout hit: QEMU killed
RUNNER_NO_GUEST_EXIT = 66    # QEMU ended without the guest exiting through isa-debug-exit
RUNNER_BACKEND_MISSING = 67  # the backend cannot run on this host (e.g. no /dev/vhost-net)
RUNNER_BACKEND_FAILED = 68   # the backend (peer, testpmd, passt, tap) failed or died
RUNNER_PROTOCOL = 69         # guest output broke the results protocol
RUNNER_INTERNAL = 70         # bug in the runner
RUNNER_NO_RATE = 71          # a throughput search ran but has no verified rate
RUNNER_HANGUP = 129          # SIGHUP (128 + 1)
RUNNER_INTERRUPTED = 130     # SIGINT (128 + 2)
RUNNER_TERMINATED = 143      # SIGTERM (128 + 15)

RUNNER_CODES = {
    RUNNER_USAGE: "bad runner options",
    RUNNER_TIMEOUT: "runner timeout (QEMU killed)",
    RUNNER_NO_GUEST_EXIT: "QEMU ended without a guest exit",
    RUNNER_BACKEND_MISSING: "backend not available on this host",
    RUNNER_BACKEND_FAILED: "backend failed",
    RUNNER_PROTOCOL: "results protocol violated",
    RUNNER_INTERNAL: "runner internal error",
    RUNNER_NO_RATE: "search found no verified rate",
    RUNNER_HANGUP: "hung up (SIGHUP)",
    RUNNER_INTERRUPTED: "interrupted (SIGINT)",
    RUNNER_TERMINATED: "terminated (SIGTERM)",
}


def guest_code_from_qemu_status(status):
    """The guest's exit code from QEMU's exit status, or None when the guest
    did not leave through isa-debug-exit (status 0, even, or a signal)."""
    if status is None or status < 0 or status % 2 == 0:
        return None
    return status >> 1


def status_name(code):
    if code in GUEST_CODES:
        return GUEST_CODES[code]
    if code in RUNNER_CODES:
        return RUNNER_CODES[code]
    return "unknown (%d)" % code
