"""PNG plots of a sweep with Debian's python3-matplotlib when it is
importable; otherwise none (the table and CSVs carry the same numbers)."""

import os

from .. import result
from ..analysis import counts
from . import report

# (metric, y label, scale, file name stem: what is plotted, in its unit);
# an app's report.MISLEADING figures are not plotted.
PLOTTED = (("goodput_bps", "goodput Gbit/s (the receiver's count)", 1e-9, "goodput_gbps"),
           ("tps", "transactions/s", 1.0, "tps"),
           ("pps", "packets/s", 1.0, "pps"), ("bps", report.FRAME_GBIT, 1e-9, "gbps"),
           ("cpu_pct", "host CPU %", 1.0, "cpu_pct"),
           ("sd_us_per_kb", "service demand, host CPU us/KB", 1.0, "sd_us_per_kb"),
           ("p99_ns", "p99 latency, us", 1e-3, "p99_us"),
           ("loss_pct", "loss %", 1.0, "loss_pct"),
           ("kicks_per_packet", "kicks per frame", 1.0, "kicks_per_packet"))


def available():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _isnum(v):
    try:
        float(v)
        return True
    except ValueError:
        return False


def x_axis(axes):
    """The axis to plot against: the first numeric one with more than one
    value, else the first with more than one value, else the first."""
    names = list(axes)
    multi = [a for a in names if len(axes[a]) > 1] or names
    return next((a for a in multi if all(_isnum(v) for v in axes[a])), multi[0])


def series(results, metric, xaxis):
    """{legend: [(x label, result.Summary, guest only)]}: one line per
    combination of the other axes, points in the axis' own order; guest
    only: a rate of the guest's own that no host-side count checked
    (sweep.GUEST_ONLY). results: a result.SweepResult or its JSON object."""
    results = result.SweepResult.from_dict(results)
    others = [a for a in results.axes if a != xaxis]
    order = {v: i for i, v in enumerate(results.axes[xaxis])}
    out = {}
    for p in results.points:
        s = (p.summary or {}).get(metric)
        if s is None:
            continue
        key = ", ".join("%s=%s" % (a, p.params[a]) for a in others)
        alone = metric in counts.GUEST_RATES and p.host_counted is False
        out.setdefault(key, []).append((p.params[xaxis], s, alone))
    for pts in out.values():
        pts.sort(key=lambda t: order[t[0]])
    return out


def log2_axis(labels, numeric):
    """Values that are all powers of two (sessions, msg_size, pmd_burst,
    queue sizes) are spread evenly on a log2 axis; on a linear one 32 and
    256 would squeeze 1, 2, 4 and 8 into a corner."""
    return numeric and len(labels) > 1 and all(
        float(v).is_integer() and int(float(v)) > 0 and int(float(v)) & (int(float(v)) - 1) == 0
        for v in labels)


# A guest-only point (no host-side count): a hatched bar, a hollow marker.
HATCH = "//"
HOLLOW = "white"
GUEST_ONLY_LABEL = "guest only: no host-side count (not a delivered rate)"


def draw(ax, lines, labels, numeric, scale):
    """The series on matplotlib axes ax: lines over a numeric axis with a
    tick at each value (1, 2, 4, 8 sessions; no 1.5), log2 when the values
    are powers of two, grouped bars over categories (backend, pin), never a
    line between unrelated categories; error bars are the min-max of the
    repeats. Guest-only points are drawn apart: hatched bars, hollow
    markers. Returns whether there was one."""
    width = 0.8 / len(lines)
    apart = False
    for k, (key, pts) in enumerate(sorted(lines.items())):
        color = "C%d" % (k % 10)
        ys = [s.median * scale for _, s, _ in pts]
        err = [[max(0.0, s.median - s.min) * scale for _, s, _ in pts],
               [max(0.0, s.max - s.median) * scale for _, s, _ in pts]]
        alone = [alone for _, _, alone in pts]
        apart = apart or any(alone)
        if numeric:
            xs = [float(x) for x, _, _ in pts]
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, color=color, label=key or None)
            if any(alone):
                ax.plot([x for x, a in zip(xs, alone) if a], [y for y, a in zip(ys, alone) if a],
                        linestyle="none", marker="o", markerfacecolor=HOLLOW,
                        markeredgecolor=color, zorder=3)
        else:
            xs = [labels.index(x) - 0.4 + width * (k + 0.5) for x, _, _ in pts]
            labelled = False
            for part in (False, True):
                idx = [i for i, a in enumerate(alone) if a == part]
                if not idx:
                    continue
                ax.bar([xs[i] for i in idx], [ys[i] for i in idx], width=width,
                       yerr=[[err[0][i] for i in idx], [err[1][i] for i in idx]], capsize=3,
                       color=HOLLOW if part else color, edgecolor=color,
                       hatch=HATCH if part else None,
                       label=None if labelled else key or None)
                labelled = True
    if log2_axis(labels, numeric):
        ax.set_xscale("log", base=2)
        ax.minorticks_off()
    ax.set_xticks([float(v) for v in labels] if numeric else list(range(len(labels))))
    ax.set_xticklabels(labels)
    return apart


def guest_only_handle(numeric):
    """The legend entry of draw()'s guest-only points."""
    if numeric:
        from matplotlib.lines import Line2D
        return Line2D([], [], linestyle="none", marker="o", markerfacecolor=HOLLOW,
                      markeredgecolor="black", label=GUEST_ONLY_LABEL)
    from matplotlib.patches import Patch
    return Patch(facecolor=HOLLOW, edgecolor="black", hatch=HATCH, label=GUEST_ONLY_LABEL)


def runs_text(lines):
    """How many runs each point's error bar spans: "5 runs", "3-5 runs"."""
    ns = sorted({s.n for pts in lines.values() for _, s, _ in pts})
    return "%d run%s" % (ns[0], "" if ns[0] == 1 else "s") if len(ns) == 1 else \
        "%d-%d runs" % (ns[0], ns[-1])


def figure(plt, results, xaxis, lines, ylabel, scale):
    """One metric's figure: its title names what is plotted against what
    with the sweep's fixed parameters, its y label what the points and
    error bars are. results: a result.SweepResult or its JSON object."""
    results = result.SweepResult.from_dict(results)
    labels = results.axes[xaxis]
    numeric = all(_isnum(v) for v in labels)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    apart = draw(ax, lines, labels, numeric, scale)
    fixed = " ".join("%s=%s" % kv for kv in sorted((results.fixed or {}).items()))
    ax.set_title("%s by %s%s" % (ylabel, xaxis, "\n" + fixed if fixed else ""), fontsize=10)
    ax.set_xlabel(xaxis + (" (log2 scale)" if log2_axis(labels, numeric) else ""))
    ax.set_ylabel("%s\nmedian; error bars: min..max of %s" % (ylabel, runs_text(lines)))
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    handles = ax.get_legend_handles_labels()[0]
    if apart:
        handles.append(guest_only_handle(numeric))
    if handles:
        ax.legend(handles=handles, fontsize=8)
    fig.tight_layout()
    return fig


def plot_sweep(results, outdir):
    """One PNG per metric against x_axis() (figure()), named after what it
    plots in its unit. Returns the file names written. results: a
    result.SweepResult or its JSON object (the Writer's)."""
    results = result.SweepResult.from_dict(results)
    if not results.points or not available():
        return []
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xaxis = x_axis(results.axes)
    made = []
    left_out = report.MISLEADING.get(report.app_kind(results.app), ())
    for metric, ylabel, scale, stem in PLOTTED:
        lines = series(results, metric, xaxis) if metric not in left_out else {}
        if not lines:
            continue
        fig = figure(plt, results, xaxis, lines, ylabel, scale)
        name = "%s_vs_%s.png" % (stem, xaxis)
        fig.savefig(os.path.join(outdir, name), dpi=100)
        plt.close(fig)
        made.append(name)
    return made
