"""The README says what the tree is: "The two commands" shows two (`make
run`, `make test`), every other `make` target it lists is one of the
Makefile's, its layout table names every top-level entry git tracks and
only paths that exist, and it types no duration (they are measured in
docs/bench.md, with the date and the command; test_bench_doc checks the
rates and sizes)."""

import os
import re
import subprocess

import vnpy

README = os.path.join(vnpy.ROOT, "README.md")


def section(text, title):
    start = text.index("## " + title + "\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else len(text)]


def readme():
    with open(README) as f:
        return f.read()


def make_targets():
    out = set()
    for name in ("Makefile", "tests/unit/unit.mk", "tests/fuzz/fuzz.mk"):
        with open(os.path.join(vnpy.ROOT, name)) as f:
            out |= set(re.findall(r"^([a-z][a-z-]*):", f.read(), re.M))
    return out


def test_the_two_commands_are_two():
    sec = section(readme(), "The two commands")
    block = sec[sec.index("```sh\n") + 6:sec.index("```", sec.index("```sh\n") + 6)]
    assert [l.split("#")[0].strip() for l in block.splitlines()] == ["make run", "make test"]
    listed = set(re.findall(r"^\| `make ([a-z-]+)`(?:, `make ([a-z-]+)`)?", sec, re.M))
    names = {n for pair in listed for n in pair if n}
    assert {"fuzz", "soak", "bench", "next", "passt", "deps"} <= names
    assert names <= make_targets(), names - make_targets()


def test_layout_table_matches_the_tree():
    sec = section(readme(), "Layout")
    paths = {p.rstrip("/") for row in re.findall(r"^\| (.*?) \|", sec, re.M)
             for p in re.findall(r"`([^`]+)`", row)}
    for p in paths:
        assert os.path.exists(os.path.join(vnpy.ROOT, p)), "README's layout names %s" % p
    tracked = subprocess.run(["git", "ls-files"], cwd=vnpy.ROOT, stdout=subprocess.PIPE,
                             text=True, check=True).stdout.split()
    top = {f.split("/")[0] for f in tracked} - {"README.md", ".gitignore", ".clang-format"}
    named = {p.split("/")[0] for p in paths}
    assert top <= named, "README's layout leaves out %s" % sorted(top - named)


# A duration in digits or words: "about two minutes", "a quarter of a second".
DURATION = re.compile(r"\b(\d[\d.]*|an?|one|two|three|four|five|ten|few|quarter of a|half an?)"
                      r"\s+(second|minute|hour)s?\b")


def test_the_readme_types_no_duration():
    typed = [m.group(0) for m in DURATION.finditer(readme())]
    assert not typed, "README.md types durations (measure them in docs/bench.md): %s" % typed


def test_layout_names_the_runners_packages():
    """The tools/ row names every package of tools/vnperflib (issue 30:
    the layout table matches the packages), and each folder it names is
    one of tools/ or of the library."""
    sec = section(readme(), "Layout")
    row = next(r for r in sec.splitlines() if r.startswith("| `tools/` |"))
    lib = os.path.join(vnpy.ROOT, "tools", "vnperflib")
    packages = sorted(d for d in os.listdir(lib)
                      if os.path.isfile(os.path.join(lib, d, "__init__.py")))
    assert packages, "no packages in tools/vnperflib"
    missing = [p for p in packages if "`%s/`" % p not in row]
    assert not missing, "README's tools/ row leaves out vnperflib's %s" % missing
    named = re.findall(r"`([a-z_]+)/`", row[len("| `tools/` |"):])
    gone = [d for d in named if not (os.path.isdir(os.path.join(vnpy.ROOT, "tools", d))
                                     or os.path.isdir(os.path.join(lib, d)))]
    assert not gone, "README's tools/ row names folders that are not there: %s" % gone
