"""Two ncu outputs in one file (``cat a.csv b.csv``, ``>>`` to a log): refused, saying so.

Each was refused as a bad row of the first output before: "row has 1 fields, needs 15",
"unknown unit 'Metric Unit'", "not a number: 'device__attribute_...'".
"""

from __future__ import annotations

from pathlib import Path

import pytest

import collectors
from collectors.errors import MalformedReport

LASHI = "ncu-csv/Lashi0812_CudaProgramming__ncu_reduceInteger.csv"  # ==PROF== prelude
WANGZY = "ncu-csv/wangzy0327_cuda-roofline__output_V100.csv"  # program stdout prelude
BRYCE = "ncu-csv/brycelelbach_nsightful__copy_blocked.csv"  # no prelude
RAW = "ncu-csv/meinie0826_Roofline-Analysis__torch_sdpa_flash__gqa_bf16_b32_ctx8k_p64.ncu.csv"
SAYS = "starts a second ncu output (files concatenated?); give each its own file"


def _lines(corpus: Path, name: str) -> list[str]:
    return (corpus / name).read_text().splitlines(keepends=True)


def _header(lines: list[str]) -> int:
    return next(n for n, line in enumerate(lines) if line.startswith('"ID","Process ID"'))


@pytest.mark.parametrize(
    ("first", "second"),
    [(LASHI, LASHI), (LASHI, WANGZY), (WANGZY, BRYCE), (RAW, RAW)],
)
def test_a_second_output_is_named_where_it_starts(
    corpus_dir: Path, tmp_path: Path, first: str, second: str
) -> None:
    """Its prelude (ncu's lines, the program's stdout) or, with none, its header."""
    one, two = _lines(corpus_dir, first), _lines(corpus_dir, second)
    path = tmp_path / "both.csv"
    path.write_text("".join([*one, *two]))
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path)
    assert str(info.value) == f"{path}, line {len(one) + 1}: {SAYS}"


def test_a_raw_page_with_a_second_units_row_is_a_second_output(
    corpus_dir: Path, tmp_path: Path
) -> None:
    """A second page appended without its prelude and header: its units row is no launch."""
    lines = _lines(corpus_dir, RAW)
    header = _header(lines)
    path = tmp_path / "both.csv"
    path.write_text("".join([*lines, *lines[header + 1 :]]))
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path)
    assert str(info.value) == f"{path}, line {len(lines) + 1}: {SAYS}"


def test_a_bad_row_before_more_launches_keeps_its_own_error(
    corpus_dir: Path, tmp_path: Path
) -> None:
    """Not every bad row is a second output: launch rows between it and a header say no."""
    lines = _lines(corpus_dir, LASHI)
    header = _header(lines)
    bad = header + 3
    path = tmp_path / "bad.csv"
    path.write_text("".join([*lines[:bad], "Test PASSED\n", *lines[bad:], *lines[header:]]))
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path)
    assert info.value.row is not None and info.value.row.startswith(f"{bad + 1} ")
    assert "second ncu output" not in str(info.value)
