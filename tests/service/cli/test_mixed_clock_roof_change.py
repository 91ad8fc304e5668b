"""A corrected dram figure re-reads nights that mix an ncu report with a trace, on SQLite.

Eight nights of an ncu report at 1.59 GHz (its roof scaled x0.803) beside a Kineto trace of
no clock, whose attention kernel is memory-bound on either roof; then `roofguard check` with
the H100's dram corrected to 6.7 TB/s, where the kernel is compute-bound. The re-read chose
its nights' roof by the ``T_roof`` alone, alike on both: the scaled one, 69.4% of roof
against 55.7% that night, and an unchanged kernel was "suspect".
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from collectors.schema import SourceRef
from service.cli import run
from tests.factories import make_kernel, make_run

NCU = SourceRef(path="/ci/profile.ncu-rep", format="ncu-rep")
TRACE = SourceRef(path="/ci/trace.json", format="kineto-trace")
#: bf16 FLOPs taking 70% of the time of its 4 GB at 3.35 TB/s on the datasheet roof.
FLOPS = 0.7 * 4e9 / 3.35e12 * 989.4e12
DRAM = '[devices."H100-SXM5".bandwidth_byte_per_s]\ndram = 6.7e12\n'


def _report(path: Path, night: int) -> Path:
    attention = make_kernel(
        "attn", flops={"tensor_bf16": FLOPS}, dram_bytes=4e9, time_s=1.5e-3, source=TRACE
    )
    norm = make_kernel(
        "norm", flops={"fp32": 1e7}, dram_bytes=4e8, time_s=2e-4, sm_clock_hz=1.59e9, source=NCU
    )
    stamp = datetime(2026, 11, 1, 2, tzinfo=UTC) + timedelta(days=night)
    record = make_run(kernels=[attention, norm], commit=f"c{night:04d}", timestamp=stamp)
    path.write_text(record.model_dump_json(), encoding="utf-8")
    return path


def _config(folder: Path, text: str) -> str:
    folder.mkdir()
    (folder / "roofguard.toml").write_text(text, encoding="utf-8")
    return str(folder / "roofguard.toml")


def test_the_traces_kernel_is_re_read_on_its_datasheet_roof(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'h.db'}"
    before, after = _config(tmp_path / "before", ""), _config(tmp_path / "after", DRAM)
    for night in range(8):
        args = ["ingest", str(_report(tmp_path / f"n{night}.json", night)), "--db", db]
        args += ["--repo", "acme/kernels", "--commit", f"c{night:04d}", "--branch", "main"]
        assert run([*args, "--kind", "nightly", "--config", before]) == 0
    out = tmp_path / "verdict.json"
    args = ["check", str(_report(tmp_path / "pr.json", 9)), "--repo", "acme/kernels"]
    args += ["--commit", "f00d", "--pr", "7", "--db", db, "--config", after]
    assert run([*args, "--format", "json", "--output", str(out)]) == 0
    verdict = json.loads(out.read_text(encoding="utf-8"))
    assert verdict["conclusion"] == "pass"
    attention = next(k for k in verdict["kernels"] if k["key"] == "attn")
    assert attention["status"] == "unchanged"
    percent = 100 * (FLOPS / 989.4e12) / 1.5e-3  # on the corrected datasheet roof: compute
    assert attention["percent_of_roof"] == pytest.approx(percent) == pytest.approx(55.72, 1e-4)
    assert attention["baseline"]["history"] == pytest.approx([percent] * 8)
