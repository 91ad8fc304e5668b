"""The program's own output after an ncu CSV table is set aside; a row cut short is still refused.

CI logs capture the profiled program's stdout and ncu's ``==WARNING==`` in ncu's stream: a
details page ending ``Done. 12 iterations`` was refused as "row has 1 fields, needs 15".
"""

from __future__ import annotations

from pathlib import Path

import pytest

import collectors
from collectors.errors import MalformedReport

DETAILS = "ncu-csv/wangzy0327_cuda-roofline__output_V100.csv"
RAW = "ncu-csv/meinie0826_Roofline-Analysis__torch_sdpa_flash__gqa_bf16_b32_ctx8k_p64.ncu.csv"
APP = "Done. 12 iterations\n"
WARNING = "==WARNING== Found outstanding GPU clock reset, trying to revert...\n"
NOTE = (
    "1 line(s) after the ncu table are no CSV row (the program's output?), "
    "not read: 'Done. 12 iterations'"
)


def _with(corpus_dir: Path, tmp_path: Path, name: str, tail: str) -> Path:
    path = tmp_path / "page.csv"
    path.write_text((corpus_dir / name).read_text() + tail)
    return path


@pytest.mark.parametrize("name", [DETAILS, RAW])
@pytest.mark.parametrize("tail", [APP + WARNING, WARNING + "\n" + APP, APP])
def test_the_programs_lines_after_the_table_are_noted_not_read(
    corpus_dir: Path, tmp_path: Path, name: str, tail: str
) -> None:
    whole = collectors.collect(corpus_dir / name)
    record = collectors.collect(_with(corpus_dir, tmp_path, name, tail))
    assert [k.duration_s for k in record.kernels] == [k.duration_s for k in whole.kernels]
    assert [n for n in record.notes if n not in whole.notes] == [NOTE]


@pytest.mark.parametrize("name", [DETAILS, RAW])
def test_ncus_own_lines_after_the_table_are_skipped_as_before_it(
    corpus_dir: Path, tmp_path: Path, name: str
) -> None:
    record = collectors.collect(_with(corpus_dir, tmp_path, name, WARNING))
    assert record.notes == collectors.collect(corpus_dir / name).notes


@pytest.mark.parametrize("tail", ['"11","24103","self_gemm_templ', '"11","24103","self\n' + APP])
def test_a_row_cut_short_is_still_refused(corpus_dir: Path, tmp_path: Path, tail: str) -> None:
    path = _with(corpus_dir, tmp_path, DETAILS, tail)
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path)
    assert str(info.value).endswith("row has 3 fields, needs 15 (truncated file?)")


def test_a_quoted_row_after_the_programs_lines_is_still_refused(
    corpus_dir: Path, tmp_path: Path
) -> None:
    """Lines between rows are no trailer: the table goes on after them."""
    lines = (corpus_dir / DETAILS).read_text().splitlines(keepends=True)
    path = tmp_path / "page.csv"
    path.write_text("".join([*lines[:-1], APP, lines[-1]]))
    with pytest.raises(MalformedReport, match="row has 1 fields, needs 15"):
        collectors.collect(path)
