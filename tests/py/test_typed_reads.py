"""The run's report is built typed and read by attribute: the runner, the
analysis stages and the topologies make a result.RunResult of typed parts
(no report dict, no member set by key), and they, hostile's verdict and
the fleet's report read its members, and its guests', counts', CPU's and
verdict's, by attribute (issue 30: "the report is an untyped dict").

The renderers of a sweep's, a search's and a fleet's results read the
typed result (result.SweepResult, its Points and their Summaries;
result.FleetResult, its instances, groups and their Metrics: issue 30, "the
report is an untyped dict"), not its JSON object: an AST scan of each
renderer for a subscript or a .get() with a constant key that one of those
classes names as a field (p["summary"], s["median"], r.get("metrics")). Their JSON
stays what it is (test_result.py reads the committed fixtures); a key of
the guest's protocol messages or of a search's own trials (docs/protocol.md,
search.py) is no field here and stays a read of its object."""
import ast
import dataclasses
import os

import vnpy  # noqa: F401 - puts the runner library on sys.path
from vnperflib import result

LIB = os.path.join(vnpy.ROOT, "tools", "vnperflib")

SWEEP = (result.SweepResult, result.Point, result.Summary)
# A comparison (compare.json): its rows' failed runs are keyed by side
# ("a", "b"), which a Cell and the Comparison name as fields too.
COMPARE = (result.Comparison, result.Row, result.Cell, result.Side)
FLEET = (result.FleetResult, result.FleetInstance, result.FleetFailure, result.GroupSummary,
         result.Metrics)
# compare.py's readers of its result.Comparison (its builders read
# stats.test's own {"p", "df", ...}: test_compare_builds_a_typed_comparison).
COMPARE_READERS = ("_mark", "_value_cell", "_test_cells", "_pct_cell", "row_name",
                   "table_cells", "_row_cells", "render", "notes", "named_cells",
                   "_mde_warnings", "to_csv", "to_json", "main")
COMPARE_BUILDERS = ("compare", "_cell", "_row_cell", "_average", "_row", "_cells",
                    "_with_cells", "_adjust", "_detectable")
# (module, functions scanned (None: every function of the module), the
# typed classes of what they read)
RENDERERS = (
    ("report/plots.py", None, SWEEP),
    ("campaign/ndr_render.py", ("render", "render_trials", "_median"), SWEEP),
    ("campaign/sweep.py", ("render", "columns", "guest_only_note"), SWEEP),
    ("report/htmlreport.py", ("sweep_figures", "point_rows", "point_at", "identity_section",
                              "runs_counts", "runs_verdicts", "status_line", "sweep_sections",
                              "median_cell", "aa_section", "search_sections", "sweep_median",
                              "trials_table", "search_verdict", "mean_ci", "ci_cells",
                              "read_runs"), SWEEP),
    ("report/htmlreport.py", ("compare_table", "compare_sections", "change_figure",
                              "failed_runs", "compare_counts", "compare_verdict"), COMPARE),
    ("campaign/compare.py", COMPARE_READERS, COMPARE),
    ("campaign/sweep.py", ("resplit_pools", "calibration", "main"), COMPARE),
    ("fleet/fleetreport.py", ("render", "_summary_row"), FLEET),
)


def field_names(typed=SWEEP):
    """The fields of the typed classes; a sweep's status and directory are
    no JSON keys (a search's trials have a status of their own)."""
    names = set()
    for cls in typed:
        names |= {f.name for f in dataclasses.fields(cls)}
    return names - {"extra", "keys"} - ({"directory", "status"} if typed is SWEEP else set()) \
        - ({"a", "b"} if typed is COMPARE else set())


def constant_key(node):
    """The constant string a node reads by key, or None."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        key = node.slice
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
          and node.func.attr == "get" and node.args):
        key = node.args[0]
    else:
        return None
    return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None


def dict_reads(path, functions, names):
    with open(os.path.join(LIB, path)) as f:
        tree = ast.parse(f.read(), path)
    found = []
    scanned = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef) or (functions and fn.name not in functions):
            continue
        scanned.add(fn.name)
        for node in ast.walk(fn):
            key = constant_key(node)
            if key in names:
                found.append("%s:%d %s reads [%r]" % (path, node.lineno, fn.name, key))
    missing = set(functions or ()) - scanned
    assert not missing, "%s has no %s: update RENDERERS" % (path, sorted(missing))
    return found


def test_the_renderers_read_typed_fields():
    assert {"points", "summary", "median", "params", "axes"} <= field_names(SWEEP)
    assert {"instances", "groups", "aggregate", "metrics", "pps", "why"} <= field_names(FLEET)
    assert {"rows", "columns", "significant", "pct", "a_n", "tests", "sides", "label"} <= \
        field_names(COMPARE)
    found = [x for path, fns, typed in RENDERERS
             for x in dict_reads(path, fns, field_names(typed))]
    assert not found, "reads of a typed result's field by key (use the attribute): " + \
        "; ".join(found)


def test_the_scan_finds_a_read_by_key(tmp_path):
    """Not vacuous: the scan flags both forms."""
    tree = ast.parse("def f(r):\n    return r['points'], r.get('median'), r['mode']\n")
    keys = [constant_key(n) for n in ast.walk(tree)]
    assert {"points", "median", "mode"} <= set(keys)
    assert [k for k in keys if k in field_names()] == ["points", "median"]


# The run's report and its parts (issue 30).
REPORT = (result.RunResult, result.GuestReport, result.Counts, result.Direction, result.Cpu,
          result.CpuRole, result.Verdict)
# Members that are also keys of what stays a JSON object, read as such:
# the guest's protocol messages (docs/protocol.md: a result's app, packets,
# lost, queues, streams, status...), the backends' host counts (host's
# chain backend, queues), counts.py's own objects and a hostile case's line.
SHARED = {"app", "backend", "boot", "config", "status", "lost", "sent", "packets", "queues",
          "streams", "why", "guest", "host", "result"}
# Keys of other objects in one module, named so the key stays a report
# member everywhere else: a run's identity (placement, tester), the QMP
# info of a guest (error), the app's own entry of a queue pair (cpu).
OWN = {"run/runner.py": {"placement", "error"}, "topologies/pvp.py": {"tester"},
       "analysis/outcome.py": {"cpu"}}
# Where the report is made: no dict of it, no member set by key.
BUILDERS = ("run/runner.py", "analysis/outcome.py", "analysis/counts.py", "analysis/verdict.py",
            "analysis/stalls.py", "analysis/hostbound.py", "analysis/hostcpu.py",
            "topologies/__init__.py", "topologies/base.py", "topologies/host.py",
            "topologies/guests.py", "topologies/pvp.py")
# Where it is read: (module, functions (None: all)).
READERS = tuple((m, None) for m in BUILDERS) + (
    ("campaign/hostile_verdict.py", ("outcome", "_host_frames")),
    ("campaign/conform.py", ("boot",)),
    ("campaign/conform_checks.py", ("vnet_of", "_console", "_traffic", "_uso")),
    ("report/htmlreport.py", ("run_sections", "direction_rows", "bottleneck_text",
                              "run_status", "cpu_figure", "runs_counts", "runs_verdicts")),
    ("fleet/fleetreport.py", ("instance_report", "pair_counts", "_pair_loss", "summarize",
                              "_with_pair", "build", "status_of", "finish", "write_results",
                              "fleet_identity")),
)


def report_keys():
    return {f.name for cls in REPORT for f in dataclasses.fields(cls)} - {"extra", "keys"} - \
        SHARED


def built_keys(node):
    """The constant keys node sets: a dict display's, a subscript's it
    stores to, the keywords of dict(), .update() and .setdefault()'s key."""
    if isinstance(node, ast.Dict):
        return [k.value for k in node.keys if isinstance(k, ast.Constant)]
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and \
            isinstance(node.slice, ast.Constant):
        return [node.slice.value]
    if not isinstance(node, ast.Call):
        return []
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    if name in ("dict", "update"):
        return [k.arg for k in node.keywords if k.arg]
    if name == "setdefault" and node.args and isinstance(node.args[0], ast.Constant):
        return [node.args[0].value]
    return []


def report_dicts(path, names):
    """A report built as a dict in path: its keys that name report members."""
    with open(os.path.join(LIB, path)) as f:
        tree = ast.parse(f.read(), path)
    return ["%s:%d builds [%r]" % (path, node.lineno, k) for node in ast.walk(tree)
            for k in built_keys(node) if k in names]


def test_the_runner_builds_the_report_typed():
    assert {"guests", "counts", "directions", "roles", "verdict", "side", "label",
            "metrics", "waits"} <= report_keys()
    found = [x for path in BUILDERS
             for x in report_dicts(path, report_keys() - OWN.get(path, set()))]
    assert not found, "the run's report built as a dict (build the result.RunResult's " \
        "parts): " + "; ".join(found)


def test_the_report_is_read_by_attribute():
    found = [x for path, fns in READERS
             for x in dict_reads(path, fns, report_keys() - OWN.get(path, set()))]
    assert not found, "reads of the run's report by key (use the attribute): " + \
        "; ".join(found)


def test_the_report_scan_finds_a_dict_and_a_read(tmp_path):
    """Not vacuous: a report dict, a member set by key and one read by key
    are each found; a key of the guest's messages is not."""
    tree = ast.parse("def f(g, rep):\n    rep['verdict'] = {'side': 'host'}\n"
                     "    rep.update(waits={})\n    return dict(label=1), g['guests'], "
                     "g.get('packets')\n")
    built = [k for n in ast.walk(tree) for k in built_keys(n) if k in report_keys()]
    assert sorted(built) == ["label", "side", "verdict", "waits"]
    assert [constant_key(n) for n in ast.walk(tree)
            if constant_key(n) in report_keys()] == ["guests"]


def test_compare_builds_a_typed_comparison():
    """compare() makes its result.Comparison, Rows and Cells typed from
    the start (issue 30): no dict with their members' keys in its
    builders, none set by key; a row's failed runs stay keyed by side."""
    names = field_names(COMPARE)
    with open(os.path.join(LIB, "campaign/compare.py")) as f:
        tree = ast.parse(f.read())
    fns = {fn.name: fn for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef)}
    assert set(COMPARE_BUILDERS) <= set(fns), "update COMPARE_BUILDERS"
    found = ["%s:%d builds [%r]" % (name, node.lineno, k) for name in COMPARE_BUILDERS
             for node in ast.walk(fns[name]) for k in built_keys(node) if k in names]
    assert not found, "compare.py builds its comparison as a dict: " + "; ".join(found)
