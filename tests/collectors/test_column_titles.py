"""Column titles a CSV reader cannot take as written are refused, naming the column."""

from __future__ import annotations

from pathlib import Path

import pytest

import collectors
from collectors.errors import MalformedReport

NVBENCH_CSV = "nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060.csv"


def retitled(corpus: Path, tmp_path: Path, old: str, new: str) -> Path:
    """The corpus nvbench ``--csv`` file with one title of its header replaced."""
    header, rest = (corpus / NVBENCH_CSV).read_text(encoding="utf-8").split("\n", 1)
    assert old in header.split(",")
    path = tmp_path / "bench.csv"
    path.write_text(header.replace(old, new, 1) + "\n" + rest, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("old", "new", "writes"),
    [
        ("GPU Time (sec)", "GPU Time (ms)", "GPU Time in sec"),
        ("Batch GPU (sec)", "Batch GPU (us)", "Batch GPU in sec"),
        ("GlobalMem BW (bytes/sec)", "GlobalMem BW (GB/s)", "GlobalMem BW in bytes/sec"),
        ("BWUtil", "BWUtil (%)", "BWUtil without a unit"),
    ],
)
def test_an_nvbench_title_of_another_unit_is_refused(
    corpus_dir: Path, tmp_path: Path, old: str, new: str, writes: str
) -> None:
    path = retitled(corpus_dir, tmp_path, old, new)
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path)
    assert (info.value.path, info.value.row, info.value.field) == (str(path), "1", new)
    assert f"nvbench --csv writes {writes}" in info.value.reason


def test_an_nvbench_title_in_its_own_unit_or_none_still_reads(
    corpus_dir: Path, tmp_path: Path
) -> None:
    whole = collectors.collect(corpus_dir / NVBENCH_CSV)
    bare = collectors.collect(retitled(corpus_dir, tmp_path, "GPU Time (sec)", "GPU Time"))
    assert [k.duration_s for k in bare.kernels] == [k.duration_s for k in whole.kernels]
    assert whole.kernels[0].duration_s == pytest.approx(7.3405160834561055e-06)


@pytest.mark.parametrize(
    ("header", "line"),
    [("name,duration_s,bytes_dram,bytes_dram", "1"), ("name,duration_s,name", "1")],
)
def test_a_flat_csv_column_named_twice_is_named(tmp_path: Path, header: str, line: str) -> None:
    path = tmp_path / "run.csv"
    path.write_text(f"{header}\nk,1,2,3\n", encoding="utf-8")
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path)
    twice = header.rsplit(",", 1)[1]
    assert (info.value.row, info.value.field, info.value.reason) == (
        line,
        twice,
        "the column appears twice",
    )


def test_a_flat_csv_header_error_names_the_header_line(tmp_path: Path) -> None:
    """After ``# device:`` the header is line 2, not row 1."""
    path = tmp_path / "run.csv"
    path.write_text("# device: H100-SXM5\nname,duration_s,flops_fp33\nk,1,2\n", encoding="utf-8")
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path)
    assert (info.value.row, info.value.field) == ("2", "flops_fp33")
