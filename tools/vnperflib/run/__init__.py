"""One run: the QEMU command line, the guests and their consoles, the
engines (QEMU, libvirt), the host-side programs a run starts (peer, iperf,
rrserver), the orchestrator, the run itself (runner.Run), what works
(support) and what this host has (doctor). Built on backends/, topologies/
and analysis/; it prints through report/'s tables."""
