"""docs/runner.md is the runner's index (issue 30): its module map names
every module of tools/vnperflib, and every relative link in docs/*.md and
README.md, and every docs/NAME.md they mention, is a file that exists."""
import glob
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LIB = os.path.join(ROOT, "tools", "vnperflib")
INDEX = os.path.join(ROOT, "docs", "runner.md")
LINK = re.compile(r"\]\(([^)\s]+)\)")
MENTION = re.compile(r"\bdocs/[A-Za-z0-9_.-]+\.md\b")


def modules():
    """Every module of the library, relative to tools/vnperflib."""
    found = []
    for dirpath, dirnames, filenames in os.walk(LIB):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            if name.endswith(".py"):
                found.append(os.path.relpath(os.path.join(dirpath, name), LIB))
    return sorted(found)


def module_map():
    """docs/runner.md from "## Inside the runner" to the next "## " heading."""
    with open(INDEX) as f:
        text = f.read()
    start = text.find("\n## Inside the runner\n")
    assert start >= 0, "docs/runner.md has no \"## Inside the runner\" section"
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def test_module_map_names_every_module():
    text = module_map()
    missing = [m for m in modules() if "`%s`" % m not in text]
    assert not missing, "docs/runner.md's module map lacks: %s" % ", ".join(missing)


def test_module_map_names_only_modules_that_exist():
    text = module_map()
    named = set(re.findall(r"^\| `([A-Za-z0-9_/]+\.py)` \|", text, re.M))
    assert named, "docs/runner.md's module map has no `module.py` rows"
    gone = sorted(named - set(modules()))
    assert not gone, "docs/runner.md's module map names modules that are gone: %s" % gone


def doc_files():
    return sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) + [os.path.join(ROOT, "README.md")]


def test_relative_links_resolve():
    broken = []
    for path in doc_files():
        with open(path) as f:
            text = f.read()
        for target in LINK.findall(text):
            if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            file_part = target.split("#", 1)[0]
            if not os.path.exists(os.path.join(os.path.dirname(path), file_part)):
                broken.append("%s: %s" % (os.path.relpath(path, ROOT), target))
    assert not broken, "links to files that do not exist: %s" % broken


def test_mentioned_docs_exist():
    broken = []
    for path in doc_files():
        with open(path) as f:
            text = f.read()
        for name in sorted(set(MENTION.findall(text))):
            if not os.path.exists(os.path.join(ROOT, name)):
                broken.append("%s: %s" % (os.path.relpath(path, ROOT), name))
    assert not broken, "docs that do not exist: %s" % broken


def test_every_runner_page_is_in_the_index():
    with open(INDEX) as f:
        text = f.read()
    pages = [os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "docs", "runner-*.md"))]
    assert pages, "no docs/runner-*.md pages"
    missing = [p for p in sorted(pages) if "](%s)" % p not in text]
    assert not missing, "docs/runner.md does not link: %s" % missing
