"""rules.stats' numbers live in two places, each with its reason, and its citations resolve.

Knobs are the options models' fields (``rules.stats.options``); every other number is a named
constant of ``rules.stats.constants`` with the derivation or the benchmark that chose it. So a
reader finds each number once, and two modules cannot hold one idea with two values.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import math
import re
from collections import Counter
from pathlib import Path

import pytest
from pydantic import BaseModel
from scipy.integrate import quad
from scipy.special import ndtr, ndtri

import rules.stats as stats
from rules.stats import constants, options

ROOT = Path(__file__).resolve().parents[2]
STATS = ROOT / "rules" / "stats"
RULES_README = ROOT / "rules" / "README.md"
#: The two modules that may write numbers: the constants and the knobs' defaults.
NUMBERS_LIVE_IN = {"constants.py", "options.py"}
#: Arithmetic every formula writes (halves, pairs, differences, complements).
PLAIN = {0, 1, 2}
ASSIGNMENT = re.compile(r"^[A-Z][A-Z0-9_]*\s*[:=]")


def _modules() -> list[Path]:
    return sorted(STATS.glob("*.py"))


def _numbers(tree: ast.AST) -> list[ast.Constant]:
    """Numeric literals of ``tree``, leaving out decorators (cache sizes change no figure)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            skipped.update(id(n) for d in node.decorator_list for n in ast.walk(d))
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
        and id(node) not in skipped
    ]


def _module_constants(path: Path) -> list[str]:
    """Names assigned at module level in upper case."""
    names = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        names += [t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper()]
    return names


def test_only_the_constants_and_the_options_write_numbers() -> None:
    found = [
        f"{path.name}:{node.lineno}: {node.value!r}"
        for path in _modules()
        if path.name not in NUMBERS_LIVE_IN
        for node in _numbers(ast.parse(path.read_text(encoding="utf-8")))
        if node.value not in PLAIN
    ]
    assert not found, f"numbers outside rules.stats.constants / options: {found}"


def test_the_check_sees_a_number_written_elsewhere() -> None:
    tree = ast.parse("@lru_cache(maxsize=512)\ndef f(x):\n    return x * 1.4826 + 2\n")
    assert [n.value for n in _numbers(tree) if n.value not in PLAIN] == [1.4826]


def test_every_constant_is_named_once() -> None:
    names = Counter(name for path in _modules() for name in _module_constants(path))
    assert [n for n, count in names.items() if count > 1] == []


def test_every_constant_comes_with_its_reason() -> None:
    lines = (STATS / "constants.py").read_text(encoding="utf-8").splitlines()
    bare = []
    for i, line in enumerate(lines):
        if not ASSIGNMENT.match(line):
            continue
        above = i - 1
        while above >= 0 and ASSIGNMENT.match(lines[above]):
            above -= 1  # one comment may explain a group of constants
        if above < 0 or not lines[above].startswith("#:"):
            bare.append(line)
    assert bare == [] and len(_module_constants(STATS / "constants.py")) >= 30


def test_the_constants_sit_below_every_statistics_module() -> None:
    tree = ast.parse((STATS / "constants.py").read_text(encoding="utf-8"))
    imported = [
        node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    ] + [a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names]
    assert imported == ["__future__"]


def _trimmed_mean_se(fraction: float) -> float:
    """Standard error of a mean trimmed by ``fraction`` each side, relative to a mean's (normal)."""
    c = float(ndtri(1 - fraction))
    inner, _ = quad(lambda x: x * x * math.exp(-x * x / 2) / math.sqrt(2 * math.pi), -c, c)
    return math.sqrt((inner + 2 * fraction * c * c) / (1 - 2 * fraction) ** 2)


def test_the_derived_constants_match_their_derivation() -> None:
    mad_scale, median_se = constants.MAD_SCALE, constants.MEDIAN_SE  # written to 4 digits
    assert mad_scale == pytest.approx(1 / ndtri(constants.UPPER_QUARTILE), abs=5e-5)
    assert median_se == pytest.approx(math.sqrt(math.pi / 2), abs=5e-5)
    for _, fraction, factor in constants.TRIMMING:
        assert factor == pytest.approx(_trimmed_mean_se(fraction), abs=5e-4)
    assert ndtr(1 / constants.MAD_SCALE) == pytest.approx(constants.UPPER_QUARTILE, abs=1e-5)


def test_the_public_constants_are_the_constants_module_s() -> None:
    for name in ("MAD_SCALE", "MEDIAN_SE", "OUTLIER_Z", "TRIMMING"):
        assert getattr(stats, name) is getattr(constants, name)


# ---- citations: a name the statistics' text cites must exist


def _known_names() -> set[str]:
    """Every name a docstring of rules.stats may cite: module members, fields, parameters."""
    known: set[str] = set()
    for path in _modules():
        module = importlib.import_module(f"rules.stats.{path.stem}")
        known |= set(vars(module))
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, BaseModel):
                known |= set(value.model_fields)
            elif dataclasses.is_dataclass(value):
                known |= {f.name for f in dataclasses.fields(value)}
        tree = ast.parse(path.read_text(encoding="utf-8"))
        known |= {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
        known |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return known


def _resolves(reference: str) -> bool:
    """Whether ``rules.stats.x.y`` or ``x.y`` (a member of the rules.stats module ``x``) exists."""
    if reference.startswith("rules.") and not reference.startswith("rules.stats."):
        return importlib.util.find_spec(reference) is not None
    parts = reference.removeprefix("rules.stats.").split(".")
    try:
        obj: object = importlib.import_module(f"rules.stats.{parts[0]}")
        rest = parts[1:]
    except ModuleNotFoundError:
        obj, rest = stats, parts
    for part in rest:
        fields = {f.name for f in dataclasses.fields(obj)} if dataclasses.is_dataclass(obj) else ()
        if not hasattr(obj, part) and part not in fields:
            return False
        obj = getattr(obj, part, None)
    return True


def stale_citations(text: str, known: set[str]) -> list[str]:
    """Cited names (````name````) of rules.stats that do not exist."""
    stale = []
    for cited in set(re.findall(r"``([A-Za-z_][\w.]*)``", text)):
        if cited.endswith(".py"):
            if not any(ROOT.rglob(cited.rsplit("/", 1)[-1])):
                stale.append(cited)
        elif "." in cited:
            if not _resolves(cited):
                stale.append(cited)
        elif ("_" in cited or cited.isupper()) and cited not in known:
            stale.append(cited)
    return sorted(stale)


def test_every_cited_name_exists() -> None:
    known = _known_names()
    stale = {
        path.name: found
        for path in _modules()
        if (found := stale_citations(path.read_text(encoding="utf-8"), known))
    }
    assert stale == {}


def test_a_stale_citation_is_found() -> None:
    known = _known_names()
    text = "``judge_everything`` and ``rules.stats.joint.NOISE_EFFICIENCY`` and ``judge_latest``"
    assert stale_citations(text, known) == [
        "judge_everything",
        "rules.stats.joint.NOISE_EFFICIENCY",
    ]


# ---- the reader's table (rules/README.md, the gate)


def _readme_table() -> str:
    text = RULES_README.read_text(encoding="utf-8")
    start = text.index("**Every knob and constant.**")
    return text[start : text.index("\n## ", start)]


def test_the_readme_table_lists_every_knob_and_constant() -> None:
    models = (
        options.CompareOptions,
        options.ChangePointOptions,
        options.GateSettings,
        options.GateOptions,
    )
    knobs = {name for model in models for name in model.model_fields}
    names = knobs | set(_module_constants(STATS / "constants.py")) | {"GATE_Z"}
    table = _readme_table()
    assert [n for n in sorted(names) if f"`{n}`" not in table] == []


def test_the_readme_cites_only_constants_that_exist() -> None:
    text = RULES_README.read_text(encoding="utf-8")
    section = text[text.index("## Noise-aware statistics") : text.index("## Configuration (")]
    cited = set(re.findall(r"`([A-Z][A-Z0-9_]{2,})`", section))
    existing = set(_module_constants(STATS / "constants.py")) | {"GATE_Z"}
    assert sorted(cited - existing) == []
