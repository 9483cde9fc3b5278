"""Topologies as objects (tools/vnperflib/topologies/): each knows its
guests, its default app and its support rows; no module outside the
package branches on a topology's name."""

import ast
import dataclasses
import glob
import os

import pytest

from vnpy import ROOT, run_opts
from vnperflib import backends, options, result, topologies
from vnperflib.run import identity, support
from vnperflib.errors import RunnerError

PACKAGE = os.path.join(ROOT, "tools", "vnperflib", "topologies")


def sources():
    """tools/vnperf, vnperflib outside topologies/, bench/."""
    return [p for p in ([os.path.join(ROOT, "tools", "vnperf")]
                        + glob.glob(os.path.join(ROOT, "tools", "vnperflib", "**", "*.py"),
                                    recursive=True)
                        + glob.glob(os.path.join(ROOT, "bench", "*.py")))
            if not p.startswith(PACKAGE + os.sep)]


def is_topology_object(node):
    """topo, self.topo, topologies.topology_for(opts): a Topology."""
    if isinstance(node, ast.Call):
        node = node.func
    name = node.id if isinstance(node, ast.Name) else \
        node.attr if isinstance(node, ast.Attribute) else ""
    return name.startswith("topo")


def names_topology(node):
    """opts.topology, a variable topology, rep.get("topology"),
    rep["topology"], a topology object's name (topo.name)."""
    if isinstance(node, ast.Attribute):
        return node.attr == "topology" or node.attr == "name" and is_topology_object(node.value)
    if isinstance(node, ast.Name):
        return node.id == "topology"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr == "get" and bool(node.args) and \
            isinstance(node.args[0], ast.Constant) and node.args[0].value == "topology"
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "topology"
    return False


def branches(path):
    """Comparisons of a topology's name (== "guests", in ("pvp", ...)) and
    calls of nfwd(): a topology branch outside its object."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Compare) and any(names_topology(x)
                                              for x in [n.left] + n.comparators):
            out.append(n.lineno)
        elif isinstance(n, ast.Call) and (
                isinstance(n.func, ast.Name) and n.func.id == "nfwd"
                or isinstance(n.func, ast.Attribute) and n.func.attr == "nfwd"):
            out.append(n.lineno)
    return ["%s:%d" % (os.path.relpath(path, ROOT), line) for line in out]


def test_no_topology_branch_outside_topologies():
    found = [hit for p in sources() for hit in branches(p)]
    assert found == [], "topology branches outside topologies/: " + ", ".join(found)


def test_the_scan_sees_each_kind_of_branch(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("def f(opts, rep, topology):\n"
                 "    a = opts.topology == 'guests'\n"
                 "    b = rep.get('topology') in ('pvp', 'pvvp')\n"
                 "    c = topology_pvp.nfwd(opts)\n"
                 "    d = rep['topology'] != 'host'\n"
                 "    e = topology in CHAINS\n"
                 "    f = topo.name != 'host'\n"
                 "    g = topologies.topology_for(opts).name == 'pvp'\n"
                 "    h = rr.name == 'x'\n"
                 "    return opts.topology, topologies.topology_for(opts).nfwd, topo.name\n")
    assert [h.split(":")[1] for h in branches(str(p))] == ["2", "3", "4", "5", "6", "7", "8"]


def opts(**kw):
    return run_opts(**dict(dict(backend="dgram", duration=3, size=60, machine="microvm"), **kw))


def test_the_factory_names_the_four_and_refuses_another():
    assert topologies.NAMES == ("host", "guests", "pvp", "pvvp")
    assert [topologies.topology_for(opts(topology=n)).name for n in topologies.NAMES] == \
        list(topologies.NAMES)
    assert (topologies.ALL["pvp"].nfwd, topologies.ALL["pvvp"].nfwd) == (1, 2)
    with pytest.raises(RunnerError) as e:
        options.build(topology="ring", backend="dgram")
    assert e.value.status == 64 and "unknown topology 'ring': one of host, guests, pvp, pvvp" \
        in e.value.line
    # A report from before --topology, or of another runner's: one guest.
    assert topologies.of_report(result.RunResult()) is topologies.ALL["host"]
    assert topologies.of_report(result.RunResult(topology="pvvp")).nfwd == 2


@pytest.mark.parametrize("name,app", [("host", "gen"), ("guests", "gen"), ("pvp", "fwd"),
                                      ("pvvp", "fwd")])
def test_default_app(name, app):
    assert topologies.ALL[name].default_app() == app
    assert options.build(topology=name, backend="dgram").app == app


def test_roles_receivers_first_sender_last():
    host = topologies.ALL["host"].roles(opts(app="gen"))
    assert host == [("guest", identity.app_words(opts(app="gen")))]
    rx, tx = topologies.ALL["guests"].roles(opts(topology="guests", app="rr", count=9))
    assert rx == ("rx", ["app=rr", "role=server", "duration=6", "count=9"])
    assert tx[0] == "tx" and tx[1][0] == "app=rr"
    chain = topologies.ALL["pvvp"].roles(opts(topology="pvvp", backend="vhost-user", app="fwd"))
    assert [label for label, _ in chain] == ["fwd1", "fwd2", "tester"]
    assert chain[-1][1][0] == "app=gen"
    # The peer tester is on the host: the forwarder alone.
    peer = topologies.ALL["pvp"].roles(opts(topology="pvp", app="fwd"))
    assert [label for label, _ in peer] == ["fwd1"]


def test_support_rows_are_the_topologies():
    rows = {(app, t.name) for t in topologies.ALL.values() for app in t.rows}
    assert set(support.TABLE) == rows
    assert set(topologies.ALL["guests"].rows) == {"gen", "rr"}
    assert set(topologies.ALL["pvp"].rows) == set(topologies.ALL["pvvp"].rows) == {"fwd"}
    assert set(topologies.ALL["host"].rows) == set(support.NET_APPS)
    assert support.why_not("fwd", "tap", "host").startswith("fwd needs two NICs")
    assert support.why_not("sink", "dgram", "guests") == topologies.ALL["guests"].no_row
    assert support.why_not("gen", "dgram", "pvvp") == topologies.ALL["pvvp"].no_row
    assert support.why_not("fwd", "vhost-user", "pvp") is None


@pytest.mark.parametrize("name,ident", [
    ("host", {}), ("guests", {}), ("pvp", {"tester": "peer"}),
    ("pvvp", {"tester": "peer"})])
def test_identity_fields(name, ident):
    assert topologies.ALL[name].identity(opts(topology=name, app="fwd")) == ident


def test_identity_of_the_dpdk_peer_tester():
    o = opts(topology="pvp", app="fwd", backend="vhost-user", tester="peer", warmup=0.0)
    assert topologies.ALL["pvp"].identity(o) == {"tester": "peer", "warmup": "0",
                                                 "max_lag": "0.0005"}


def test_search_and_backend_specifics():
    t = topologies.ALL
    assert [t[n].device_app() for n in topologies.NAMES] == ["sink", "sink", "fwd", "fwd"]
    assert [t[n].gen_sends(opts(topology=n)) for n in topologies.NAMES] == \
        [False, True, False, False]
    assert t["pvp"].gen_sends(opts(topology="pvp", backend="vhost-user"))
    assert [t[n].joins_guests for n in topologies.NAMES] == [False, True, True, True]
    assert [t[n].ip6 for n in topologies.NAMES] == [True, False, False, False]
    mq = [t[n].queues_refusal(opts(topology=n, backend="vhost-user", queues=2))
          for n in topologies.NAMES]
    assert mq == [None, "--queues and --vcpus: --topology host, pvp or pvvp", None, None]
    assert "the DPDK peer tester drives one queue pair" in t["pvp"].queues_refusal(
        opts(topology="pvp", backend="vhost-user", tester="peer", queues=2))
    assert t["guests"].receiver_app(opts(topology="guests", app="gen")) == "sink"
    assert t["guests"].receiver_app(opts(topology="guests", app="rr")) == "rr"
    assert t["host"].make_backend("dgram", opts(app="gen")) is None
    be = t["pvvp"].make_backend("dgram", opts(topology="pvvp", app="fwd"))
    assert be.nfwd == 2 and type(be) is type(backends.make("dgram", opts(topology="pvvp",
                                                                         app="fwd")))


def test_finish_report_without_a_chain_has_waits_only():
    rep = result.RunResult.from_dict({"guests": [{"label": "guest", "result": {}}], "host": {}})
    assert topologies.ALL["host"].finish_report(rep) == dataclasses.replace(rep, waits={})
