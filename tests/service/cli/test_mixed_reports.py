"""The report files of one run given together: in any order, and from tools naming one card
by different names (ncu's "NVIDIA GeForce RTX 3070", the catalog's RTX-3070)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from service.cli import run

PYTEST_BENCHMARK = "pytest-benchmark/benchmark-action_github-action-benchmark__pytest_output.json"
NCU_REP = "ncu-rep/NVIDIA_nsight-training__sample_report.ncu-rep"


def _gbench(path: Path, names: list[str]) -> Path:
    context = {"date": "2026-11-30T02:00:00+00:00", "library_build_type": "release"}
    benchmarks = [
        {"name": name, "run_type": "iteration", "real_time": 12.5 + i, "time_unit": "us"}
        for i, name in enumerate(names)
    ]
    path.write_text(json.dumps({"context": context, "benchmarks": benchmarks}))
    return path


def _ingest(db: Path, *files: Path | str, device: str = "H100-SXM5") -> list[str]:
    argv = ["ingest", *map(str, files), "--repo", "acme/k", "--commit", "c1", "--branch", "main"]
    return [*argv, "--device", device, "--db", f"sqlite:///{db}"]


def _runs(db: Path) -> list[tuple[int, int]]:
    with sqlite3.connect(db) as conn:
        query = "SELECT run_id, count(*) FROM measurements GROUP BY run_id ORDER BY run_id"
        return [tuple(row) for row in conn.execute(query)]


def test_the_same_files_in_another_order_are_one_run(tmp_path, capsys) -> None:
    """A glob or a locale may list them otherwise: it stored a second run of one commit."""
    first = _gbench(tmp_path / "a.json", ["BM_gemv/64", "BM_gemv/128"])
    second = _gbench(tmp_path / "b.json", ["BM_copy/64"])
    db = tmp_path / "h.db"
    assert run(_ingest(db, first, second)) == 0
    assert run(_ingest(db, second, first)) == 0
    assert "already ingested as run 1 (same content)" in capsys.readouterr().out
    assert _runs(db) == [(1, 3)]


@pytest.mark.corpus
def test_one_cards_reports_named_two_ways_are_one_run(tmp_path, corpus_dir) -> None:
    """ncu names the card as the driver does, a pytest-benchmark file by --device."""
    db = tmp_path / "h.db"
    timings = tmp_path / "pytest.json"  # a copy: the corpus file is read-only
    timings.write_bytes((corpus_dir / PYTEST_BENCHMARK).read_bytes())
    assert run(_ingest(db, corpus_dir / NCU_REP, timings, device="RTX-3070")) == 0
    assert run(_ingest(db, timings, corpus_dir / NCU_REP, device="RTX-3070")) == 0
    [(_, kernels)] = _runs(db)
    assert kernels == 3


def test_a_file_naming_no_device_beside_one_that_does_asks_for_device(tmp_path, capsys) -> None:
    named = tmp_path / "named.json"
    named.write_text(
        json.dumps(
            {
                "schema_version": 1,
                "device": {"name": "NVIDIA H100 80GB HBM3"},
                "profiler": {"tool": "ncu"},
                "kernels": [{"name": "k", "key": "k", "duration_s": 1e-3}],
            }
        )
    )
    unnamed = _gbench(tmp_path / "bench.json", ["BM_gemv/64"])
    argv = ["ingest", str(named), str(unnamed), "--repo", "acme/k", "--commit", "c1"]
    assert run([*argv, "--branch", "main", "--db", f"sqlite:///{tmp_path / 'h.db'}"]) == 2
    err = capsys.readouterr().err
    assert f"{unnamed}: names no device, and {named} was measured on 'NVIDIA H100" in err
    assert "give the device with --device" in err
