"""What the numbers of a run mean: both sides' counts merged, host CPU, the
bottleneck verdict, stalls, statistics over repeats, merged histograms.
Mostly pure: tests/py feeds them synthetic runs."""
