"""`vnperf fleet SPEC`: groups of appliances through libvirt, the spec file
and what a fleet run amounts to (docs/fleet.md)."""
