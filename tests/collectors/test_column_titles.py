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
