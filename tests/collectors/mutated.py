"""Real reports mutated past each reader's limits, as an attacker or a broken CI writes them.

Each writer takes the corpus and a folder and returns the file it wrote; ``CASES`` says what
the one error for each must name. They are shared by the collectors' tests and the CLI and
API tests, which must give the same error as exit status 2 and as a 422 storing nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

GBENCH = "gbench/google_benchmark__tools_gbench_Inputs_test1_run1.json"
NVBENCH_CSV = "nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060.csv"
NVBENCH_MD = "nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060.md"
#: Past Python's 4,300-digit limit on int(); past a float's range; past the csv field limit.
DIGITS = "7" * 5_000
BEYOND_FLOAT = str(10**400)
LONG_CELL = "x" * 140_000


def _edit(corpus: Path, name: str, tmp: Path, old: str, new: str, out: str) -> Path:
    text = (corpus / name).read_text(encoding="utf-8")
    assert old in text, f"{name} no longer holds {old!r}"
    path = tmp / out
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def gbench_digits(corpus: Path, tmp: Path) -> Path:
    """Google Benchmark JSON whose first ``iterations`` is an integer of 5,000 digits."""
    return _edit(corpus, GBENCH, tmp, '"iterations": 1000', f'"iterations": {DIGITS}', "d.json")


def gbench_beyond_float(corpus: Path, tmp: Path) -> Path:
    """Google Benchmark JSON whose second ``real_time`` is 10**400 (no float holds it)."""
    text = (corpus / GBENCH).read_text(encoding="utf-8")
    second = text.index('"real_time"', text.index('"real_time"') + 1)
    path = tmp / "huge.json"
    tail = re.sub(r"\d+", BEYOND_FLOAT, text[second:], count=1)
    path.write_text(text[:second] + tail, encoding="utf-8")
    return path


def nvbench_csv_long_field(corpus: Path, tmp: Path) -> Path:
    """nvbench CSV whose second state's device name is 140,000 characters long."""
    lines = (corpus / NVBENCH_CSV).read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = lines[2].replace("NVIDIA GeForce RTX 2060", LONG_CELL, 1)
    path = tmp / "long.csv"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def nvbench_md_cut(corpus: Path, tmp: Path) -> Path:
    """nvbench markdown without its log (as ``--md FILE`` writes it), cut in the first row."""
    text = (corpus / NVBENCH_MD).read_text(encoding="utf-8")
    text = re.sub(r"(?ms)^# Log$.*?(?=^# Benchmark Results$)", "", text)
    first = text.index("|     2^1 = 2 |")
    path = tmp / "cut.md"
    path.write_text(text[: first + 30], encoding="utf-8")
    return path


class Case(NamedTuple):
    """A mutated file and what its error names: the line or entry, the field, the words."""

    write: Callable[[Path, Path], Path]
    row: str
    field: str | None
    words: str


CASES = {
    "5000-digit integer": Case(
        gbench_digits,
        "benchmarks[0]",
        "iterations",
        "an integer of 5,000 digits; roofguard reads integers of at most 4,300 digits",
    ),
    "integer beyond a float": Case(
        gbench_beyond_float,
        "benchmarks[1] (BM_2xFaster)",
        "real_time",
        "an integer of 401 digits, too large for a number (floats end near 1.8e308)",
    ),
    "140,000-character CSV field": Case(
        nvbench_csv_long_field,
        "3",
        None,
        "a field longer than 131,072 characters",
    ),
    "cut markdown table": Case(nvbench_md_cut, "24", None, "expected 15 cells, got 2 (truncated?)"),
}
