"""Your own backend (issue 26): a dpdk-testpmd the test starts itself, as a
user runs their switch (docs/runner-run.md "Your own backend: vhost-user"), is
handed to the runner as `--vhost-user-socket`, its port counts as the host
side (`--host-count testpmd:0@PREFIX`, DPDK telemetry). The runner starts
no testpmd of its own; the counts of the guest, the runner's report and
testpmd's own statistics at SIGINT are the same frames."""

import json
import os
import shutil
import signal
import subprocess
import time
import uuid

import pytest

from vnharness import exitcodes, run_vnperf
from vnperflib.backends import testpmd

pytestmark = pytest.mark.skipif(shutil.which("dpdk-testpmd") is None or os.geteuid() != 0,
                                reason="needs dpdk-testpmd (Debian dpdk-dev) and root")
RUN = ["run", "--accel", "tcg", "--quiet", "--json"]
N = 20000
GEN_SIZE = 64
# gen's frames plus lwIP's one gratuitous ARP when the interface comes up
# (broadcast, ethertype 0x0806, 60 bytes with padding: seen with testpmd's
# `set verbose 1`); the guest counts it in tx_packets and net.lwip.tx.
ARP_BYTES = 60


class UserTestpmd:
    """dpdk-testpmd as TOOLCHAIN-FACTS.md starts "a vhost-user backend
    started by someone else": rxonly, statistics every second, a
    --file-prefix of its own (its telemetry socket under /var/run/dpdk/)."""

    def __init__(self, d, client=False, fwd=("--forward-mode=rxonly",)):
        self.sock = os.path.join(str(d), "user.sock")
        # Not vnperf-PID-...: the runner's clean_stale must leave it alone.
        self.prefix = "owntp-" + uuid.uuid4().hex[:8]
        self.log = os.path.join(str(d), "testpmd.log")
        vdev = "net_vhost0,iface=%s%s" % (self.sock, ",client=1" if client else "")
        argv = ["dpdk-testpmd", "--no-huge", "-m", "512", "--no-pci", "--no-shconf",
                "--file-prefix", self.prefix, "-l", "0-1", "--vdev", vdev, "--",
                "--stats-period", "1", "--nb-cores=1", "--total-num-mbufs=16384"] + list(fwd)
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT)
        # Up once it prints its first statistics (telemetry asked for
        # ethdev stats while it still sets its port up crashed it here).
        deadline = time.monotonic() + 30
        while "Port statistics" not in self.text():
            assert self.proc.poll() is None, "testpmd exited: %s" % self.text()[-500:]
            assert time.monotonic() < deadline, "testpmd not up: %s" % self.text()[-500:]
            time.sleep(0.1)

    def text(self):
        with open(self.log, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stop(self):
        """SIGINT: testpmd prints its forward statistics; port 0's (None
        when it was killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree("/var/run/dpdk/" + self.prefix, ignore_errors=True)
        groups = testpmd.parse_fwd_stats(self.text())
        return groups[-1][0] if groups else None


@pytest.fixture
def user_testpmd(tmp_path):
    started = []

    def start(**kw):
        started.append(UserTestpmd(tmp_path, **kw))
        return started[-1]
    yield start
    for t in started:
        t.stop()


def run_json(args, timeout=120):
    r = run_vnperf(RUN + args, timeout=timeout)
    assert r.stdout, "no report (status %d): %s" % (r.returncode, r.stderr)
    return r, json.loads(r.stdout)


def check_counts(r, rep, tp):
    """The guest's frames, the runner's host count and testpmd's own RX
    count agree, the difference to gen's count being lwIP's one ARP."""
    assert r.returncode == 0, (r.stderr, rep["why"])
    res = rep["guests"][-1]["result"]
    stats = tp.stop()
    assert res["packets"] == N
    assert res["tx_packets"] == N + res["net"]["lwip"]["tx"] == N + 1
    host = rep["host"]
    assert host["rx_frames"] == res["tx_packets"] == stats["RX-packets"]
    assert host["rx_bytes"] == N * GEN_SIZE + ARP_BYTES == res["tx_bytes"]
    d = rep["counts"]["directions"]["guest->host frames"]
    assert d["verdict"] == "agree" and d["sent"] == d["received"] == N + 1
    # No testpmd of the runner's: the identity names the user's backend.
    assert "testpmd" not in host and "testpmd" not in rep["cpu"]["roles"]
    assert rep["identity"]["vhost_user_socket"] == tp.sock


@pytest.mark.timeout_s(240)
def test_gen_to_your_vhost_user_socket_counts_agree_with_testpmd(image, user_testpmd):
    tp = user_testpmd()
    r, rep = run_json(["--vhost-user-socket", tp.sock, "--host-count",
                       "testpmd:0@" + tp.prefix, "--app", "gen", "--count", str(N),
                       "--size", str(GEN_SIZE), "--duration", "30"])
    check_counts(r, rep, tp)
    assert rep["identity"]["vhost_user_qemu"] == "client"


@pytest.mark.timeout_s(240)
def test_qemu_as_server_for_a_backend_that_connects(image, user_testpmd):
    """--vhost-user-server: QEMU listens on the path, testpmd's client=1
    port connects (it retries every second) and the same counts agree."""
    tp = user_testpmd(client=True)
    r, rep = run_json(["--vhost-user-socket", tp.sock, "--vhost-user-server", "--host-count",
                       "testpmd:0@" + tp.prefix, "--app", "gen", "--count", str(N),
                       "--size", str(GEN_SIZE), "--duration", "30"])
    check_counts(r, rep, tp)
    assert rep["identity"]["vhost_user_qemu"] == "server"
    assert not os.path.exists(tp.sock), "the runner leaves QEMU's socket behind"


def test_sink_takes_your_backends_traffic_and_the_counts_add_up(image, user_testpmd):
    """testpmd txonly as your backend sends to the guest from its connect
    on and after the sink stopped: the host count is testpmd's TX-packets,
    and what the sink did not count waits in its RX ring (one ring at most)."""
    tp = user_testpmd(fwd=["--forward-mode=txonly", "--eth-peer=0,52:54:00:00:00:01",
                           "--txpkts=64"])
    r, rep = run_json(["--vhost-user-socket", tp.sock, "--host-count", "testpmd:0@" + tp.prefix,
                       "--app", "sink", "--duration", "2"])
    assert r.returncode == 0, (r.stderr, rep["why"])
    stats = tp.stop()
    d = rep["counts"]["directions"]["host->guest frames"]
    assert d["sent"] == rep["host"]["tx_frames"] == stats["TX-packets"]
    assert d["received"] == rep["guests"][-1]["result"]["packets"] > 0
    ring = rep["guests"][-1]["result"]["vnet"]["rx"]["size"]
    assert d["verdict"] in ("agree", "lossy") and d["lost"] <= ring, d["why"]
    assert [w["at"] for w in d["where"]] in ([], ["ring"]), d["why"]


def test_without_host_count_the_report_says_guest_only(image, user_testpmd):
    tp = user_testpmd()
    r = run_vnperf(["run", "--accel", "tcg", "--quiet", "--vhost-user-socket", tp.sock,
                    "--count", "1000", "--duration", "30"], timeout=120)
    assert r.returncode == 0, r.stderr
    assert "guest only (sent 1000)" in r.stdout, r.stdout
    assert tp.stop()["RX-packets"] == 1001


def test_a_port_the_dpdk_process_lacks_is_one_line_67(image, user_testpmd):
    tp = user_testpmd()
    r = run_vnperf(RUN + ["--vhost-user-socket", tp.sock, "--host-count",
                          "testpmd:9@" + tp.prefix], timeout=60)
    assert r.returncode == exitcodes.RUNNER_BACKEND_MISSING, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "has no port 9 (its ports: 0)" in lines[0], r.stderr
    assert not r.stdout


def test_a_socket_whose_backend_died_is_one_line_67(image, user_testpmd):
    """SIGKILL leaves testpmd's socket behind with nobody listening: refused
    before anything starts; so is a path with no socket at all."""
    tp = user_testpmd()
    tp.proc.kill()
    tp.proc.wait()
    assert os.path.exists(tp.sock)
    for path, needle in ((tp.sock, "nobody accepts a connection"),
                         (tp.sock + ".absent", "no such socket")):
        r = run_vnperf(RUN + ["--vhost-user-socket", path], timeout=60)
        assert r.returncode == exitcodes.RUNNER_BACKEND_MISSING, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0], r.stderr
