"""tools/soak.py's drift check: a static memory counter may step once
during the warm-up (newlib's printf filling its free list of big numbers
the first time a value needs them) and must then stay flat; a leak, or any
step after the warm-up, fails."""

import vnpy  # noqa: F401 (tools/ on sys.path)
import soak

N = 40  # samples in a phase


def mem(heap=5120, tx=0):
    return {"heap_in_use": heap, "heap_top": 8192, "dma_bytes": 5904384,
            "arena_free": 125532160, "tx_in_flight": tx,
            "lwip": {"heap": 1576, "tcp_pcb": 1, "heap_err": 0}}


def phase(heap_at):
    """N samples, one a second, heap_in_use heap_at(i) at sample i."""
    return [{"t": float(i + 1), "mem": mem(heap_at(i))} for i in range(N)]


def test_flat_passes():
    assert soak.drift("rr tx", phase(lambda i: 5120), mem()) == []


def test_one_step_in_the_warmup_passes():
    # As seen in the rr client: 5120 B, then 5360 B from some seconds in.
    samples = phase(lambda i: 5120 if i < 5 else 5360)
    assert soak.drift("rr tx", samples, mem(5360)) == []


def test_leak_fails():
    samples = phase(lambda i: 5120 + 48 * i)
    bad = soak.drift("rr tx", samples, mem(5120 + 48 * N))
    assert len(bad) == 1 and "heap_in_use changed after the warm-up" in bad[0], bad


def test_one_step_after_the_warmup_fails():
    last = soak.warmup(N) + 1
    samples = phase(lambda i: 5120 if i < last else 5360)
    bad = soak.drift("rr tx", samples, mem(5360))
    assert bad == ["rr tx: heap_in_use changed after the warm-up: 5120, then 5360, "
                   "result 5360"], bad


def test_result_differing_from_the_samples_fails():
    bad = soak.drift("rr tx", phase(lambda i: 5120), mem(5360))
    assert len(bad) == 1 and "heap_in_use" in bad[0], bad


def test_dynamic_counter_rising_floor_fails():
    samples = [{"t": float(i + 1), "mem": mem(tx=i)} for i in range(N)]
    bad = soak.drift("gen tx", samples, mem())
    assert len(bad) == 1 and "tx_in_flight grew" in bad[0], bad


def test_too_few_samples_after_the_warmup():
    bad = soak.drift("rr tx", phase(lambda i: 5120)[:4], mem())
    assert bad == ["rr tx: 4 samples, too few to judge drift"], bad
