"""Shared helpers of the pure-Python tests (no image, no QEMU): the
runner's library on sys.path and running tools/vnperf itself."""

import importlib.machinery
import importlib.util
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VNPERF = os.path.join(ROOT, "tools", "vnperf")
PYTHON = "/usr/bin/python3"

sys.path.insert(0, os.path.join(ROOT, "tools"))


def run_vnperf(args, timeout=120, env=None, **kw):
    """Runs tools/vnperf with args; returns CompletedProcess (text)."""
    return subprocess.run([PYTHON, VNPERF] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout,
                          env=env, stdin=subprocess.DEVNULL, **kw)


def standin_image(d):
    """A readable file to pass as --image: what these tests check (a
    refusal, a stand-in QEMU's console) comes before anything reads the
    image, so they need no build (test_nobuild.py)."""
    path = os.path.join(str(d), "standin.elf")
    with open(path, "wb") as f:
        f.write(b"\x7fELF")
    return path


def cli_opts(*argv):
    """(tools/vnperf as a module, the options its parser makes of argv):
    run, or sweep with its own options."""
    loader = importlib.machinery.SourceFileLoader("vnperf_cli_opts", VNPERF)
    spec = importlib.util.spec_from_loader("vnperf_cli_opts", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    top = mod.Parser(prog="vnperf")
    sub = top.add_subparsers(dest="cmd", parser_class=mod.Parser)
    p = sub.add_parser(argv[0])
    mod.add_guest_options(p, axes=argv[0] != "run")
    if argv[0] != "run":
        from vnperflib.campaign import sweep
        sweep.add_arguments(p)
    p.add_argument("config", nargs="*")
    return mod, top.parse_args(list(argv))


def run_opts(**kw):
    """RunOptions with kw over the defaults, as one function under test
    reads them; not validated (options.build is, and refuses what such a
    test hands the function to refuse itself)."""
    from vnperflib import options
    for k in ("config", "qemu_args"):
        if k in kw:
            kw[k] = tuple(kw[k])
    return options.RunOptions(**kw)
