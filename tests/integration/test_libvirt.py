"""The libvirt engine against a real libvirtd (started here when
none runs; skipped with the reason when libvirt cannot run at all). After
every test no domain of it may be left (`virsh list --all`)."""

import json

import pytest

import libvirtd
from vnharness import run_vnperf

_why = libvirtd.why_not()
pytestmark = pytest.mark.skipif(_why is not None, reason="libvirt: %s" % _why)


@pytest.fixture(scope="module")
def daemon():
    d = libvirtd.Daemons().start()
    yield d
    d.stop()


@pytest.fixture(autouse=True)
def no_domains_left(no_leftovers, daemon):
    """Every domain a test starts carries its tag; none may outlive it."""
    prefix = "vnperf-%s-" % no_leftovers
    yield prefix
    left = libvirtd.domains(prefix)
    libvirtd.destroy(left)
    assert not left, "domains left behind: %s" % ", ".join(left)


@pytest.mark.timeout_s(120)
def test_run_engine_libvirt_gen_to_dgram_peer_exact(image, peer):
    r = run_vnperf(["run", "--engine", "libvirt", "--accel", "tcg", "--backend", "dgram",
                    "--app", "gen", "--count", "5000", "--rate", "5k", "--json", "-q"])
    rep = json.loads(r.stdout)
    assert r.returncode == 0, (rep["why"], r.stderr)
    assert rep["engine"].startswith("libvirt qemu:///system")
    assert rep["machine"] == "q35"
    d = rep["counts"]["directions"]["guest->host"]
    assert d["sent"] == d["received"] == 5000
    assert rep["counts"]["agree"] is True
    g = rep["guests"][0]
    assert g["guest_code"] == 0 and g["exit"]["code"] == 0
    assert g["argv"][0] == "libvirt"


@pytest.mark.timeout_s(120)
def test_run_engine_libvirt_guest_error_is_its_exit_code(image):
    # ring=3: the guest refuses its config (exit 2); no QEMU exit status
    # comes through libvirt, the exit line says it.
    r = run_vnperf(["run", "--engine", "libvirt", "--accel", "tcg", "--json", "-q", "--",
                    "ring=3"])
    rep = json.loads(r.stdout)
    assert r.returncode == 2, (rep["why"], r.stderr)
    assert "ring" in rep["why"]
    assert rep["guests"][0]["qemu_status"] is None
