"""``roofguard digest`` across a datasheet figure corrected in roofguard.toml.

Before, the nights stored on H100 dram 3.35 TB/s and those after the correction to 6.7 TB/s
were one series: every memory-bound kernel halved its percent of roof on the night of the
edit, and the week read as a regression of each one.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from service.cli import run
from tests.factories import make_kernel, make_run

DAY0 = datetime(2026, 11, 1, 2, tzinfo=UTC)
NIGHTS, CORRECTED_FROM = 21, 14
PERIOD = [
    "--from",
    (DAY0 + timedelta(days=CORRECTED_FROM - 3)).isoformat(),
    "--to",
    (DAY0 + timedelta(days=NIGHTS)).isoformat(),
]


def _config(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "roofguard.toml").write_text(text, encoding="utf-8")
    return folder / "roofguard.toml"


def _store(tmp_path: Path, slower_after: float) -> str:
    """21 nights of gemv and norm; the config corrects dram from night 14 on."""
    db = f"sqlite:///{tmp_path / 'h.db'}"
    before = _config(tmp_path / "before", "")
    after = _config(
        tmp_path / "after", '[devices."H100-SXM5".bandwidth_byte_per_s]\ndram = 6.7e12\n'
    )
    for night in range(NIGHTS):
        corrected = night >= CORRECTED_FROM
        jitter = 1 + 0.005 * (night % 3)
        gemv_time = 1.5e-3 * jitter * (slower_after if corrected else 1.0)
        kernels = [
            make_kernel("gemv", flops={"tensor_bf16": 2e10}, dram_bytes=4e9, time_s=gemv_time),
            make_kernel("norm", flops={"fp32": 1e7}, dram_bytes=4e8, time_s=2e-4 * jitter),
        ]
        stamp = DAY0 + timedelta(days=night)
        report = tmp_path / f"n{night}.json"
        record = make_run(kernels=kernels, commit=f"c{night:04d}", timestamp=stamp)
        report.write_text(record.model_dump_json(), encoding="utf-8")
        args = ["ingest", str(report), "--repo", "acme/kernels", "--commit", f"c{night:04d}"]
        args += ["--branch", "main", "--kind", "nightly", "--db", db]
        args += ["--config", str(after if corrected else before)]
        assert run(args) == 0
    return db


def _digest(db: str, capsys) -> dict:
    capsys.readouterr()
    assert run(["digest", *PERIOD, "--repo", "acme/kernels", "--json", "--db", db]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_corrected_figure_is_no_regression_week(tmp_path, capsys) -> None:
    data = _digest(_store(tmp_path, slower_after=1.0), capsys)
    moved = {e["kernel"] for s in ("regressions", "improvements", "unresolved") for e in data[s]}
    assert moved == set()


def test_a_real_slowdown_across_the_correction_still_shows(tmp_path, capsys) -> None:
    data = _digest(_store(tmp_path, slower_after=1.5), capsys)
    [regression] = data["regressions"]
    assert regression["kernel"] == "gemv"
    assert regression["relative_change"] == pytest.approx(1 / 1.5 - 1, abs=0.02)
