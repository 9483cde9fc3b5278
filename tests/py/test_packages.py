"""tools/vnperflib shows its architecture in packages (issue 30): the top
level holds only the few modules every package uses; a new module goes into
run/, backends/, topologies/, analysis/, campaign/, fleet/ or report/."""
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LIB = os.path.join(ROOT, "tools", "vnperflib")

# Cross-cutting: the options and their types, the statuses, the errors,
# the typed result, the Python API. Adding to this list is a design change.
TOP_LEVEL = {"__init__.py", "api.py", "errors.py", "exitcodes.py", "options.py",
             "optypes.py", "result.py"}
PACKAGES = {"analysis", "backends", "campaign", "fleet", "report", "run", "topologies"}


def entries():
    return [e for e in sorted(os.listdir(LIB)) if e != "__pycache__"]


def test_the_top_level_holds_only_the_cross_cutting_modules():
    flat = [e for e in entries() if os.path.isfile(os.path.join(LIB, e))]
    extra = sorted(set(flat) - TOP_LEVEL)
    assert not extra, ("tools/vnperflib/ has flat modules outside the allowed few: %s; "
                       "put them in a package (docs/runner.md, \"Inside the runner\")" % extra)


def test_every_folder_is_a_known_package():
    dirs = {e for e in entries() if os.path.isdir(os.path.join(LIB, e))}
    assert dirs == PACKAGES, "packages %s, expected %s" % (sorted(dirs), sorted(PACKAGES))
    missing = [d for d in sorted(dirs) if not os.path.isfile(os.path.join(LIB, d, "__init__.py"))]
    assert not missing, "packages without __init__.py: %s" % missing


def test_packages_nest_no_deeper():
    """One level of packages: a path names its package, as the module map
    of docs/runner.md does."""
    deep = [os.path.relpath(os.path.join(d, e), LIB) for d in PACKAGES
            for e in os.listdir(os.path.join(LIB, d))
            if e != "__pycache__" and os.path.isdir(os.path.join(LIB, d, e))]
    assert not deep, "packages inside packages: %s" % deep
