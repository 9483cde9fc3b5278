"""The Python API's examples (examples/api_*.py, docs/api.md) run as a
user runs them, under TCG with the generator or the sink over dgram: a run,
an A/B of two images with its A/A first, and an NDR search; what they print
is checked against the typed results they leave."""

import os
import subprocess

import pytest

from vnharness import PYTHON, ROOT
from vnperflib import result

EXAMPLES = os.path.join(ROOT, "examples")


def example(name, *args, timeout=300):
    r = subprocess.run([PYTHON, os.path.join(EXAMPLES, name)] + [str(a) for a in args],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_api_run(image, peer):
    out = example("api_run.py", 2000)
    assert "counts guest->host" in out
    (last,) = [l for l in out.splitlines() if l.startswith("api_run: ")]
    assert "status 0" in last and "guest->host agree (2000 sent, 2000 received)" in last


def test_api_run_out_writes_the_clis_run_json(image, peer, tmp_path):
    """api.run(out=DIR) leaves DIR/run.json as `vnperf run --out DIR`: the
    run's typed result, read back equal."""
    from vnperflib import api
    res = api.run(image=image, backend="dgram", app="gen", count=500, out=str(tmp_path / "r"))
    back = result.load(str(tmp_path / "r" / "run.json"))
    assert res.status == back.status == 0
    assert back.counts.directions["guest->host"].sent == 500 and back.identity == res.identity


@pytest.mark.timeout_s(400)
def test_api_ab_with_its_aa_first(image, peer, tmp_path):
    out = example("api_ab.py", tmp_path, image, "", 2, timeout=380)
    aa, ab = result.load(str(tmp_path / "aa")), result.load(str(tmp_path / "ab"))
    assert [p.params["aa"] for p in aa.points] == ["a", "b"]
    assert [p.params["image"] for p in ab.points] == [image, str(tmp_path / "b.elf")]
    assert all(p.statuses == (0, 0) for p in aa.points + ab.points)
    text = out.split("A/B (")
    assert text[0].startswith("A/A (") and len(text) == 2
    for section in text:
        assert "pps%" in section


@pytest.mark.timeout_s(300)
def test_api_ndr(image, peer, tmp_path):
    out = example("api_ndr.py", tmp_path / "ndr", timeout=280)
    res = result.load(str(tmp_path / "ndr"))
    (p,) = res.points
    (s,) = p.searches
    assert p.params["size"] == "64" and s["verified"] and s["rate_pps"] > 0
    assert "api_ndr: size 64: NDR %d pps (verified)" % s["rate_pps"] in out
