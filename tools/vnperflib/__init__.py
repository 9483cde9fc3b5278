"""vnperf host runner library: one job per module (see docs/runner.md)."""
