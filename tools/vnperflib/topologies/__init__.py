"""Topologies as objects: host (one guest and the backend's host end),
guests (a sender guest and its partner on a wire), pvp and pvvp (one or
two forwarding guests between a tester's two ports). base.Topology says
what each answers; topology_for(opts) is the one place that maps
--topology to its object."""

from ..errors import usage
from .base import Topology
from .guests import GUESTS
from .host import HOST
from .pvp import PVP, PVVP

# --topology name -> object, in the order --help and the support table list them.
ALL = {t.name: t for t in (HOST, GUESTS, PVP, PVVP)}
NAMES = tuple(ALL)

__all__ = ["ALL", "NAMES", "Topology", "named", "of_report", "topology_for"]


def named(name):
    """The topology called name; a usage error (64) for another name."""
    t = ALL.get(name)
    if t is None:
        raise usage("unknown topology %r: one of %s" % (name, ", ".join(NAMES)))
    return t


def topology_for(opts):
    """The topology of run options (RunOptions, or a sweep's namespace)."""
    return named(opts.topology)


def of_report(res):
    """The topology run res (a result.RunResult) was run in; host for a
    report without one (written before --topology) or with a name this
    runner does not know."""
    return ALL.get(res.topology, HOST)
