"""A regressed kernel's finding says what the profiler saw move (issue 30, part 9).

Real ncu records of one report (A10G, ``--set roofline``): the nightlies run the
``vectorized_blocktiling`` SGEMM (121 registers per thread), the PR the ``two_blocktiling``
one (150 registers) under the same kernel name, 25% slower.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from collectors import KernelRecord, collect
from service.cli import run
from tests.factories import make_run

REPORT = "ncu-rep/AveryClapp_ESMM-Research__profile_output.ncu-rep"
WHY = "registers 121 -> 150: occupancy 33% -> 17%"


def _sgemm(record, name: str, time_s: float) -> KernelRecord:
    kernel = next(k for k in record.kernels if k.name.startswith(f"void {name}<"))
    return kernel.model_copy(
        update={"name": "sgemm", "key": "sgemm", "duration_s": time_s, "samples_s": (time_s,)}
    )


def _write(path: Path, kernel: KernelRecord, night: int, device) -> Path:
    ts = datetime(2026, 11, 1, 2, tzinfo=UTC) + timedelta(days=night)
    record = make_run(kernels=[kernel], commit=f"c{night:04d}", timestamp=ts, device=device)
    path.write_text(record.model_dump_json(), encoding="utf-8")
    return path


@pytest.fixture
def store(tmp_path, corpus_dir):
    record = collect(corpus_dir / REPORT)
    db = f"sqlite:///{tmp_path / 'h.db'}"
    base = 2.6e-4
    for night in range(8):
        kernel = _sgemm(record, "vectorized_blocktiling", base * (1 + 0.01 * (night % 3)))
        report = _write(tmp_path / f"n{night}.json", kernel, night, record.device)
        args = ["ingest", str(report), "--repo", "acme/k", "--commit", f"c{night:04d}"]
        assert run([*args, "--branch", "main", "--kind", "nightly", "--db", db]) == 0
    slow = _sgemm(record, "two_blocktiling", base * 1.25)
    again = slow.model_copy(update={"duration_s": base * 1.24, "samples_s": (base * 1.24,)})
    pr = _write(tmp_path / "pr.json", slow, 9, record.device)
    rerun = _write(tmp_path / "again.json", again, 9, record.device)
    return db, pr, rerun


def _check(db: str, pr: Path, rerun: Path, fmt: str, out: Path) -> str:
    args = ["check", str(pr), "--repo", "acme/k", "--commit", "f00d", "--pr", "7", "--db", db]
    code = run([*args, "--rerun", str(rerun), "--format", fmt, "--output", str(out)])
    assert code == 1
    return out.read_text(encoding="utf-8")


def test_the_regressed_kernel_names_what_moved_in_json_markdown_and_text(store, tmp_path):
    db, pr, rerun = store
    verdict = json.loads(_check(db, pr, rerun, "json", tmp_path / "v.json"))
    failing = [f for f in verdict["findings"] if f["kernel"] == "sgemm" and f["severity"] == "fail"]
    assert failing and failing[0]["profile"][0] == WHY
    assert all(f["profile"] == [] for f in failing[1:])  # once per kernel, on its worst finding
    markdown = _check(db, pr, rerun, "markdown", tmp_path / "v.md").replace("\\", "")  # escapes
    assert f"**Profiler, against the baseline run:** {WHY}; DRAM bytes 14.9 MB" in markdown
    text = " ".join(_check(db, pr, rerun, "text", tmp_path / "v.txt").split())
    assert f"profiler, against the baseline run: {WHY}" in text
