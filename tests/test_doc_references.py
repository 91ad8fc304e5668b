"""Every reference in the documentation resolves, and none points outside the repository.

Relative links reach a file (and a heading) of the repository; every repository path a
document names, in backticks or as a link target, exists; every dotted name of the three
packages imports. A reference into the shared material beside the checkout (``OUTSIDE``) is
not a repository path, and no document, docstring or comment may make one.
"""

from __future__ import annotations

import importlib
import re
from functools import cache
from pathlib import Path

from test_docs import MAIN_DOCS, OUTSIDE, ROOT, SKIP_DIRS, _doc_files, _files, config_keys

#: The documents whose repository paths must exist: the user's, the reference beside the code,
#: the benchmarks', the Action's and the operator's.
PATH_DOCS = tuple(
    sorted(
        {
            *MAIN_DOCS,
            *ROOT.glob("deploy/*.md"),
            *ROOT.glob("service/**/README.md"),
        }
    )
)
#: The suffix of a file the repository holds: a bare name that ends in one is a path.
FILE_SUFFIX = re.compile(
    r"\.(py|md|toml|ya?ml|json|csv|txt|sh|cfg|ini|html|j2|svg|png|sql|db|ncu-rep)$"
)
#: Files the documents name that the repository does not hold: what roofguard writes, what a
#: user brings, and a report of the corpus (which lies beside the checkout, not in it).
NOT_REPOSITORY_FILES = frozenset(
    {
        "verdict.json",
        "verdict.md",
        "roofguard-artifact.json",
        "ceilings.json",
        "health.json",
        "roofline.svg",
        "series.json",
        "x.ncu-rep",
        "panjd123_cutlass__report-s4.ncu-rep",
    }
)
#: Characters no repository path of these documents holds: placeholders, globs, commands, URLs.
NOT_A_PATH = re.compile(r"[\s$*<>{}=:?\[\]()@,'\"|\\]")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_nothing_links_outside_the_repository() -> None:
    patterns = ("*.py", "*.md", "*.yml", "*.yaml", "*.toml", "*.cfg", "*.txt", "*.sh", "run")
    hits = []
    for path in _files(*patterns):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if OUTSIDE in line:
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not hits, "links outside the repository:\n" + "\n".join(hits)


def _anchors(path: Path) -> set[str]:
    anchors, fenced = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


def test_every_relative_link_resolves_inside_the_repository() -> None:
    broken = []
    for path in _doc_files():
        for target in LINK.findall(path.read_text(encoding="utf-8")):
            if re.match(r"^[a-z]+:", target):
                continue  # http(s), mailto: not a file
            file, _, anchor = target.partition("#")
            resolved = (path.parent / file).resolve() if file else path
            where = f"{path.relative_to(ROOT)} -> {target}"
            if not resolved.is_relative_to(ROOT) or not resolved.exists():
                broken.append(where)
            elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
                broken.append(f"{where} (no such heading)")
    assert not broken, f"broken links: {broken}"


# ---- repository paths


def _prose(text: str) -> str:
    """The text outside fenced code blocks (a block's backticks are not inline code)."""
    kept, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            kept.append(line)
    return "\n".join(kept)


def named_paths(text: str) -> list[str]:
    """What looks like a repository path in a document: a backticked name or a link target
    with a ``/`` or a file suffix, which is no placeholder, glob, command, URL or flag."""
    prose = _prose(text)
    links = [t.partition("#")[0] for t in LINK.findall(prose) if not re.match(r"^[a-z]+:", t)]
    found = []
    for name in [*re.findall(r"`([^`\n]+)`", prose), *links]:
        if not name or NOT_A_PATH.search(name) or name.startswith(("-", "/", "~", OUTSIDE)):
            continue
        if re.fullmatch(r"\.[\w-]+", name):
            continue  # a suffix alone (`.ncu-rep`), not a file
        if "/" in name or FILE_SUFFIX.search(name.lower()):
            found.append(name)
    return found


@cache
def _repository_names() -> frozenset[str]:
    """The name of every file and folder in the repository (a bare name may be any of them)."""
    return frozenset(
        p.name
        for p in ROOT.rglob("*")
        if not any(part in SKIP_DIRS for part in p.relative_to(ROOT).parts)
    )


def stale_paths(text: str, where: Path) -> list[str]:
    """The repository paths ``text`` (a document in the folder ``where``) names that do not exist.

    A path with a ``/`` is the repository's when its first part is (from the document's folder
    or the root: ``OWNER/NAME`` is not), and then it must exist. A bare file name must be one
    of the repository's, or one of ``NOT_REPOSITORY_FILES``.
    """
    stale = []
    for name in named_paths(text):
        if "/" not in name:
            if name not in _repository_names() and name not in NOT_REPOSITORY_FILES:
                stale.append(name)
            continue
        head = name.split("/")[0]
        bases = [b for b in (where, ROOT) if head in (".", "..") or (b / head).exists()]
        if bases and not any((b / name).exists() for b in bases):
            stale.append(name)
    return stale


def test_made_up_paths_are_found_and_other_names_are_not() -> None:
    text = (
        "See `service/pipeline/no_such_step.py`, [the guide](rules/NO_SUCH.md#top) and\n"
        "`no_such_config.toml`; `tests/bench/README.md`, [rules](rules/README.md),\n"
        "`OWNER/NAME`, `reports/*.csv`, `verdict.json`, `--db URL`, `/api/v1`, `.ncu-rep`,\n"
        f"`{OUTSIDE}/corpus/made-up.csv` and `FLOP/B` are not stale.\n"
        "```text\n`service/inside_a_code_block.py`\n```\n"
    )
    stale = stale_paths(text, ROOT)
    assert stale == ["service/pipeline/no_such_step.py", "no_such_config.toml", "rules/NO_SUCH.md"]
    assert stale_paths("[up](../README.md) `../rules/README.md`", ROOT / ".github") == []
    assert stale_paths("`../NO_SUCH.md`", ROOT / ".github") == ["../NO_SUCH.md"]


def test_the_path_check_reads_every_document_it_should() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in PATH_DOCS}
    wanted = {"README.md", ".github/CONTRIBUTING.md", "rules/README.md", "tests/bench/README.md"}
    assert wanted | {"deploy/README.md", "service/README.md"} <= names
    assert sum(len(named_paths(p.read_text(encoding="utf-8"))) for p in PATH_DOCS) > 100


def test_every_repository_path_named_in_the_documents_exists() -> None:
    stale = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in PATH_DOCS
        for name in stale_paths(path.read_text(encoding="utf-8"), path.parent)
    ]
    assert not stale, f"paths that do not exist (moved or renamed?): {stale}"


# ---- dotted names


def _resolves(dotted: str) -> bool:
    """Whether ``a.b.c`` names a module, or an attribute of the longest importable module."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(target, attr):
                return False
            target = getattr(target, attr)
        return True
    return False


def test_every_dotted_name_in_the_documents_resolves() -> None:
    pattern = r"`((?:collectors|rules|service)(?:\.\w+)+)`"
    keys = set(config_keys())  # `rules.fail_on` is a config key, not a module
    stale = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in MAIN_DOCS
        for name in re.findall(pattern, path.read_text(encoding="utf-8"))
        if name not in keys and not _resolves(name)
    ]
    assert not stale, f"modules or names that do not exist: {stale}"
