"""What every topology answers (host, guests, pvp, pvvp): its guests and
their config words, its default app, its rows of the support table, what
it adds to a run's identity, how it finishes a report, and what the
backends, the checks and the searches need to know of it. The runner
asks the object (topologies.topology_for(opts)); no module outside this
package branches on a topology's name (tests/py/test_topologies.py)."""

import dataclasses

from ..analysis import stalls

# Options of the pvp tester (--tester peer over vhost-user), seconds.
TESTER_KNOBS = ("warmup", "max_lag")
NO_PARTNER = "--topology guests pairs gen with a sink and an rr client with an rr server"


class Topology:
    name = None
    # Forwarding guests between the tester's two ports (pvp 1, pvvp 2).
    nfwd = 0
    # The runner's backend joins guests (a wire, testpmd io, a chain): no
    # single guest faces the host end.
    joins_guests = False
    # The main guest's app -> {backend: None (works) or why not}; a
    # backend left out of a row gets the row's "*" entry (support.py).
    rows = {}
    # Why an app without a row does not run in this topology.
    no_row = NO_PARTNER
    # What support.check's refusal line says of the topology.
    flag = ""
    # The runner addresses the guest's host end in IPv6 (--ip6): one guest
    # facing the host end only. Several queue pairs and vCPUs: queues_refusal.
    ip6 = False
    # netif_vlan= (run/vlan.py): why this topology cannot match the
    # guest's tag, None where it can (host, guests).
    vlan_refusal = "--topology host or guests only"
    # Every guest gets the words after --: a tagged guest's partner is
    # tagged too, no host end to match (guests).
    vlan_all_guests = False

    def default_app(self):
        """The main guest's app when --app is not given (with a backend)."""
        return "gen"

    def roles(self, opts):
        """[(label, config words)]: receivers first, the sender last (its
        result is the run's)."""
        raise NotImplementedError

    def option_refusal(self, opts):
        """One line when an option is another topology's, else None."""
        if opts.tester:
            return "--tester chooses the tester of --topology pvp|pvvp"
        for k in TESTER_KNOBS:
            if getattr(opts, k) is not None:
                return "--%s is the pvp tester's (--topology pvp --tester peer)" % \
                    k.replace("_", "-")
        return None

    def queues_refusal(self, opts):
        """One line when --queues or --vcpus above 1 cannot run here, else
        None (support.queues_refusal asks the backend after)."""
        return "--queues and --vcpus: --topology host, pvp or pvvp"

    def app_refusal(self, backend, params):
        """One line when the main guest's parameters (identity.guest_params)
        cannot run over backend here beyond the support rows, else None."""
        return None

    def own_nic_app(self, app):
        """Whether app runs on a virtio-net -device of the user's own."""
        return False

    def pmd_refusal(self, opts, knob):
        """One line when testpmd knob (--fwd-mode, ...) given over
        vhost-user does not apply here, else None."""
        return None

    def switch_io(self):
        """Whether testpmd joins guests in io mode (vhost-user)."""
        return self.joins_guests

    def identity(self, opts):
        """{field: string} this topology adds to a run's identity."""
        return {}

    def make_backend(self, name, opts):
        """The backend that wires this topology for --backend name, or None
        for the backend's own (one guest, or two on its wire)."""
        return None

    def finish_report(self, res):
        """Run res (a result.RunResult) with the topology's part of it:
        its waits here, a chain's counts and metrics too."""
        return dataclasses.replace(res, waits=stalls.waits(res))

    def gen_sends(self, opts):
        """Whether the tester of a search is a gen guest (imix= possible)
        rather than the host peer (one size)."""
        return False

    def receiver_app(self, opts):
        """The app that receives the tester's frames (search's latency
        trials need it to send them back)."""
        return opts.app

    def device_app(self):
        """The device under test of a throughput search when --app is not
        given."""
        return "sink"
