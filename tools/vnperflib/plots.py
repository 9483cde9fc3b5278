"""PNG plots of a sweep with Debian's python3-matplotlib, when importable;
otherwise nothing (the tables and CSV carry the same numbers)."""

import os


def available():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def plot_sweep(results, outdir):
    """One PNG per metric (pps, Gbit/s, service demand) against the first
    numeric axis, one line per combination of the other axes; error bars
    are the min-max spread. Returns the file names written."""
    if not available() or not results["points"]:
        return []
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    axes = list(results["axes"])
    xaxis = next((a for a in axes if all(_isnum(v) for v in results["axes"][a])), None)
    if xaxis is None:
        return []
    others = [a for a in axes if a != xaxis]
    made = []
    for metric, label, scale in (("pps", "packets/s", 1.0), ("bps", "Gbit/s", 1e-9),
                                 ("sd_us_per_packet", "host CPU us/packet", 1.0)):
        series = {}
        for p in results["points"]:
            s = p["summary"].get(metric)
            if s is None:
                continue
            key = ", ".join("%s=%s" % (a, p["params"][a]) for a in others) or metric
            series.setdefault(key, []).append((float(p["params"][xaxis]), s))
        if not series:
            continue
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for key, pts in sorted(series.items()):
            pts.sort(key=lambda t: t[0])
            xs = [x for x, _ in pts]
            ys = [s["median"] * scale for _, s in pts]
            lo = [(s["median"] - s["min"]) * scale for _, s in pts]
            hi = [(s["max"] - s["median"]) * scale for _, s in pts]
            ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, label=key)
        ax.set_xlabel(xaxis)
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        name = "%s_vs_%s.png" % (metric, xaxis)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, name), dpi=100)
        plt.close(fig)
        made.append(name)
    return made


def _isnum(v):
    try:
        float(v)
        return True
    except ValueError:
        return False
