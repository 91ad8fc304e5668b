"""Google Benchmark instances of one benchmark keep their arguments in their name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import collectors
from collectors.errors import MalformedReport
from service.cli import run


def _gbench(path: Path, *names: str) -> Path:
    entries = [
        {
            "name": name,
            "run_name": name,
            "run_type": "iteration",
            "iterations": 100,
            "real_time": 10.0 * (i + 1),
            "cpu_time": 10.0 * (i + 1),
            "time_unit": "us",
            "bytes_per_second": 1e11,
        }
        for i, name in enumerate(names)
    ]
    context = {"date": "2026-11-20T02:00:00+00:00", "library_build_type": "release"}
    path.write_text(json.dumps({"context": context, "benchmarks": entries}))
    return path


def test_two_sizes_of_one_benchmark_read_apart(tmp_path: Path) -> None:
    record = collectors.collect(_gbench(tmp_path / "b.json", "BM_copy/1024", "BM_copy/4096"))
    assert [(k.name, k.key) for k in record.kernels] == [
        ("BM_copy/1024", "BM_copy[arg0=1024]"),
        ("BM_copy/4096", "BM_copy[arg0=4096]"),
    ]


def test_the_verdict_names_each_instance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _gbench(tmp_path / "b.json", "BM_copy/1024/real_time", "BM_copy/4096/real_time")
    db = f"sqlite:///{tmp_path / 'h.db'}"
    args = ["check", str(report), "--repo", "acme/k", "--commit", "c1", "--device", "H100-SXM5"]
    assert run([*args, "--db", db, "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert "BM_copy/1024/real_time" in out and "BM_copy/4096/real_time" in out


@pytest.mark.parametrize(
    ("names", "keys", "alone"),
    [
        (
            ["BM_copy/1048576/manual_time", "BM_copy/1048576"],
            ["BM_copy[arg0=1048576]/manual_time", "BM_copy[arg0=1048576]"],
            "BM_copy[arg0=1048576]",
        ),
        (
            ["BM_copy/64/real_time", "BM_copy/64/process_time/real_time"],
            ["BM_copy[arg0=64]/real_time", "BM_copy[arg0=64]/process_time/real_time"],
            "BM_copy[arg0=64]",
        ),
    ],
)
def test_runs_apart_only_by_their_modifiers_read_apart(
    tmp_path: Path, names: list[str], keys: list[str], alone: str
) -> None:
    """Refused before as one duplicate benchmark; the modifiers join the key only on a clash.

    Each run alone in its file keeps the key stored histories know it by.
    """
    record = collectors.collect(_gbench(tmp_path / "b.json", *names))
    assert [(k.name, k.key) for k in record.kernels] == list(zip(names, keys, strict=True))
    for name in names:
        (kernel,) = collectors.collect(_gbench(tmp_path / "one.json", name)).kernels
        assert kernel.key == alone


def test_runs_that_clash_with_their_modifiers_too_are_still_refused(tmp_path: Path) -> None:
    path = _gbench(tmp_path / "b.json", "BM_copy/64/real_time", "BM_copy/64.0/real_time")
    with pytest.raises(MalformedReport, match="duplicate benchmark"):
        collectors.collect(path)
