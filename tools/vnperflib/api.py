"""vnperf from Python (docs/api.md): run, sweep, ndr, compare and fleet
with keyword options, returning typed results (result.py).

Each call is the command of the same name: its keyword options are the
command's options (count=2000 is --count 2000, size=[64, 512] is
--size 64,512, aa=True is --aa, config=["kick_batch=32"] the words after
--), read by the CLI's own parser and made into the same RunOptions by
options.build, so a call is refused where the command is, with its status
and line: VnperfError. What the command prints (its tables) is not printed;
the runner's progress lines still go to stderr."""

import contextlib
import dataclasses
import importlib.machinery
import importlib.util
import io
import json
import os

from . import exitcodes, options, result
from .errors import RunnerError
from .run.proc import Interrupted

CLI_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "vnperf")


class VnperfError(RunnerError):
    """A refusal or failure the command ends with: status (its exit status,
    docs/protocol.md's table) and line (the one line it prints)."""


_cli = None


def cli():
    """tools/vnperf as a module: its parser and its commands."""
    global _cli
    if _cli is None:
        loader = importlib.machinery.SourceFileLoader("vnperf_cli", CLI_PATH)
        spec = importlib.util.spec_from_loader("vnperf_cli", loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
        _cli = mod
    return _cli


def _word(v):
    if isinstance(v, dict):
        return ",".join("%s=%s" % kv for kv in v.items())
    if isinstance(v, (list, tuple)):
        return ",".join(str(x) for x in v)
    return str(v)


# Options given once per value (the CLI's repeatable ones).
REPEATED = {"qemu_args": "--qemu-arg", "a_where": "--a-where", "b_where": "--b-where"}


def argv(command, *positional, **kw):
    """The command line of a call: keyword options as the CLI's options."""
    words = [command] + [str(p) for p in positional]
    config = kw.pop("config", None) or ()
    for name, v in kw.items():
        if name in REPEATED:
            words += ["%s=%s" % (REPEATED[name], x) for x in v or ()]
        elif v is True:
            words.append("--" + name.replace("_", "-"))
        elif v is not None and v is not False:
            words.append("--%s=%s" % (name.replace("_", "-"), _word(v)))
    if config:
        words += ["--"] + [str(w) for w in config]
    return words


def parse(words):
    """The CLI parser's namespace of words; its refusal as VnperfError."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            return cli().parser(words).parse_args(words)
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else exitcodes.RUNNER_USAGE
            lines = err.getvalue().strip().splitlines() or ["%s: refused" % words[0]]
            raise VnperfError(status, lines[-1].removeprefix("vnperf: ")) from None


@contextlib.contextmanager
def _as_api():
    """The command's failures as VnperfError."""
    try:
        yield
    except VnperfError:
        raise
    except RunnerError as e:
        raise VnperfError(e.status, e.line) from None
    except Interrupted as e:
        raise VnperfError(e.status, "%s: stopped, everything torn down" % e) from None


def _command(ns):
    """Runs the CLI's command of ns, its standard output kept: (status,
    what it printed)."""
    out = io.StringIO()
    with _as_api(), contextlib.redirect_stdout(out):
        status = cli().COMMANDS[ns.cmd][2](ns)
    return status, out.getvalue()


def run_options(**kw):
    """The RunOptions of `vnperf run` with these options (its refusals);
    make_run=True: `make run`'s defaults, as the CLI's --make-run."""
    ns = parse(argv("run", **kw))
    with _as_api():
        return options.RunOptions.from_cli(ns, make_run=ns.make_run)


def run(**kw):
    """One `vnperf run`: its result.RunResult, whatever its status (status
    and why say how it went). No console echo unless quiet=False; out=DIR
    writes DIR/run.json as `vnperf run --out DIR` (the directory made, or
    refused, before the run)."""
    kw.setdefault("quiet", True)
    opts = run_options(**kw)
    with _as_api():
        res, _ = cli().run_report(opts)
    return res


def _directory(command, out, positional=(), **kw):
    """A command that writes a results directory: its result.SweepResult,
    with the status the command returned."""
    if not out:
        raise VnperfError(exitcodes.RUNNER_USAGE, "%s: out= is the results directory to "
                          "write (the API does not choose one)" % command)
    status, _ = _command(parse(argv(command, *positional, out=out, **kw)))
    with _as_api():
        return dataclasses.replace(result.load(out), status=status)


def sweep(out, **kw):
    """`vnperf sweep` into directory out: its result.SweepResult."""
    return _directory("sweep", out, **kw)


def ndr(out, **kw):
    """`vnperf ndr` (or search="pdr=0.1%") into directory out: its
    result.SweepResult, each point's searches in point.searches."""
    return _directory("ndr", out, **kw)


def fleet(spec, out, **kw):
    """`vnperf fleet SPEC` into directory out: its result.SweepResult (a
    point per group and one for the fleet)."""
    return _directory("fleet", out, positional=(spec,), **kw)


def compare(a, b, **kw):
    """`vnperf compare A B`: its result.Comparison. A compared point with a
    failed run is refused (status 64), as on the command line."""
    kw.pop("json", None)
    kw.pop("csv", None)
    _, text = _command(parse(argv("compare", a, b, json=True, **kw)))
    return result.Comparison.from_dict(json.loads(text))
