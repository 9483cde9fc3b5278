"""The renderers of a sweep's, a search's and a fleet's results read the
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
FLEET = (result.FleetResult, result.FleetInstance, result.FleetFailure, result.GroupSummary,
         result.Metrics)
# (module, functions scanned (None: every function of the module), the
# typed classes of what they read)
RENDERERS = (
    ("report/plots.py", None, SWEEP),
    ("campaign/search_run.py", ("render", "render_trials", "_median"), SWEEP),
    ("campaign/sweep.py", ("render", "columns", "guest_only_note"), SWEEP),
    ("report/htmlreport.py", ("sweep_figures",), SWEEP),
    ("fleet/fleetreport.py", ("render", "_summary_row"), FLEET),
)


def field_names(typed=SWEEP):
    """The fields of the typed classes; a sweep's status and directory are
    no JSON keys (a search's trials have a status of their own)."""
    names = set()
    for cls in typed:
        names |= {f.name for f in dataclasses.fields(cls)}
    return names - {"extra", "keys"} - ({"directory", "status"} if typed is SWEEP else set())


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
