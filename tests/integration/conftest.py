"""pytest setup for the integration tests (docs/runner.md, "Tests").

- Per-test timeout without pytest-timeout: SIGALRM around the test call;
  default DEFAULT_TIMEOUT_S, @pytest.mark.timeout_s(N) to change it.
- @pytest.mark.slow tests run only with VNPERF_SLOW=1 (CI budget).
- Every test gets a unique VNPERF_TEST_TAG in the environment its children
  inherit; afterwards any process still carrying it (QEMU, peers, testpmd,
  passt) is killed and the test fails, as does any new vnperf-* network
  namespace."""

import os
import signal
import uuid

import pytest

import vnharness

DEFAULT_TIMEOUT_S = 180


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long test, run only with VNPERF_SLOW=1")
    config.addinivalue_line("markers", "timeout_s(n): per-test timeout in seconds")


def pytest_collection_modifyitems(config, items):
    if os.environ.get("VNPERF_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: set VNPERF_SLOW=1 to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


class TestTimeout(Exception):
    pass


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    m = item.get_closest_marker("timeout_s")
    limit = int(m.args[0]) if m else DEFAULT_TIMEOUT_S

    def expired(signum, frame):
        raise TestTimeout("test ran longer than %d s" % limit)

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(limit)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture(autouse=True)
def no_leftovers():
    """Fails the test if it left a process or a vnperf-* namespace behind
    (and removes them, so one failure does not cascade)."""
    tag = uuid.uuid4().hex[:12]
    os.environ[vnharness.TAG_ENV] = tag
    ns_before = vnharness.vnperf_netns()
    yield tag
    del os.environ[vnharness.TAG_ENV]
    pids = vnharness.tagged_pids(tag)
    # A child may still be on its way out after a kill: give it a moment.
    pids = vnharness.wait_gone(pids, 3.0)
    left = ["%d %s" % (p, vnharness.proc_cmdline(p)) for p in pids]
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    # Only this test's namespaces: the runner puts the tag in the name.
    new_ns = {n for n in vnharness.vnperf_netns() - ns_before if tag in n}
    for ns in new_ns:
        os.system("ip netns del %s" % ns)
    assert not left, "processes left behind: %s" % "; ".join(left)
    assert not new_ns, "network namespaces left behind: %s" % ", ".join(sorted(new_ns))


@pytest.fixture(scope="session")
def image():
    """The kernel image; `make test` builds it before the tests."""
    assert os.path.isfile(vnharness.IMAGE), "%s missing: run make first" % vnharness.IMAGE
    return vnharness.IMAGE


@pytest.fixture(scope="session")
def peer():
    """The host peer binary (tools/peer)."""
    assert os.path.isfile(vnharness.PEER), "%s missing: run make first" % vnharness.PEER
    return vnharness.PEER
