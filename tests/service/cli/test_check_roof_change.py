"""A datasheet peak corrected in roofguard.toml, through `roofguard check` on SQLite.

Before, the nights stored on H100 dram 3.35 TB/s were compared as stored with a run on the
corrected 6.7 TB/s: gemv went 79.9% -> 39.9% of roof at the same time, the check failed
every unchanged kernel, and nothing said why.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from service.cli import run
from tests.factories import make_kernel, make_run

NOTE = (
    "H100-SXM5 roof changed since the baseline: dram 3.35 → 6.70 TB/s; "
    "earlier runs re-read on today's roof"
)


def _report(path: Path, night: int, gemv_scale: float = 1.0) -> Path:
    gemv_time = 1.5e-3 * gemv_scale
    gemv = make_kernel("gemv", flops={"tensor_bf16": 2e10}, dram_bytes=4e9, time_s=gemv_time)
    norm = make_kernel("norm", flops={"fp32": 1e7}, dram_bytes=4e8, time_s=2e-4)
    stamp = datetime(2026, 11, 1, 2, tzinfo=UTC) + timedelta(days=night)
    record = make_run(kernels=[gemv, norm], commit=f"c{night:04d}", timestamp=stamp)
    path.write_text(record.model_dump_json(), encoding="utf-8")
    return path


def _config(path: Path, text: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "roofguard.toml").write_text(text, encoding="utf-8")
    return path / "roofguard.toml"


@pytest.fixture
def nights(tmp_path: Path) -> tuple[Path, str]:
    """Eight nights stored on the catalog's H100 figures (dram 3.35 TB/s)."""
    db = f"sqlite:///{tmp_path / 'h.db'}"
    catalog = _config(tmp_path / "before", "")
    for night in range(8):
        report = _report(tmp_path / f"n{night}.json", night)
        args = ["ingest", str(report), "--repo", "acme/kernels", "--commit", f"c{night:04d}"]
        args += ["--branch", "main", "--kind", "nightly", "--db", db, "--config", str(catalog)]
        assert run(args) == 0
    return tmp_path, db


def _check(tmp_path: Path, db: str, report: Path) -> tuple[int, dict]:
    corrected = _config(
        tmp_path / "after", '[devices."H100-SXM5".bandwidth_byte_per_s]\ndram = 6.7e12\n'
    )
    out = tmp_path / "verdict.json"
    args = ["check", str(report), "--repo", "acme/kernels", "--commit", "f00d", "--pr", "7"]
    args += ["--db", db, "--format", "json", "--output", str(out), "--config", str(corrected)]
    code = run(args)
    return code, json.loads(out.read_text(encoding="utf-8"))


def test_unchanged_kernels_pass_on_the_corrected_roof_with_a_note(nights) -> None:
    tmp_path, db = nights
    code, verdict = _check(tmp_path, db, _report(tmp_path / "pr.json", 9))
    assert (code, verdict["conclusion"]) == (0, "pass")
    assert NOTE in verdict["notes"]
    gemv = next(k for k in verdict["kernels"] if k["key"] == "gemv")
    assert gemv["status"] == "unchanged"
    # every baseline night read as 100 * T_roof / T on 6.7 TB/s from its own time
    assert gemv["baseline"]["history"] == pytest.approx([100 * (4e9 / 6.7e12) / 1.5e-3] * 8)
    assert gemv["percent_of_roof"] == pytest.approx(100 * (4e9 / 6.7e12) / 1.5e-3)


def test_a_really_slowed_kernel_still_fails_across_the_correction(nights) -> None:
    tmp_path, db = nights
    code, verdict = _check(tmp_path, db, _report(tmp_path / "pr.json", 9, gemv_scale=2.0))
    assert (code, verdict["conclusion"]) == (1, "fail")
    statuses = {k["key"]: k["status"] for k in verdict["kernels"]}
    assert statuses == {"gemv": "regressed", "norm": "unchanged"}
    assert NOTE in verdict["notes"]


def test_no_note_where_the_figures_did_not_change(nights) -> None:
    tmp_path, db = nights
    out = tmp_path / "verdict.json"
    report = _report(tmp_path / "pr.json", 9)
    args = ["check", str(report), "--repo", "acme/kernels", "--commit", "f00d", "--pr", "7"]
    args += ["--db", db, "--format", "json", "--output", str(out)]
    args += ["--config", str(tmp_path / "before" / "roofguard.toml")]
    assert run(args) == 0
    assert not any("roof changed" in note for note in json.loads(out.read_text())["notes"])


A100 = "A100-SXM4-80GB"
A100_DRAM = '[devices."A100-SXM4-80GB".bandwidth_byte_per_s]\ndram = 4.0e12\n'
A100_NOTE = (
    "A100-SXM4-80GB roof changed since the baseline: dram 2.04 → 4.00 TB/s; "
    "earlier runs re-read on today's roof"
)


def test_the_other_cards_history_is_read_on_its_corrected_figures(tmp_path: Path) -> None:
    """The runs on the A100 before its dram correction read at twice their percent of roof.

    Right after the runners moved to an H100, its kernels are judged against the A100's
    history. It was read as stored, so the correction on night 8 was a step in it (78.5% of
    roof, then 40%) where the kernel never changed.
    """
    db = f"sqlite:///{tmp_path / 'h.db'}"
    before, after = _config(tmp_path / "before", ""), _config(tmp_path / "after", A100_DRAM)
    for night in range(12):
        gemv = make_kernel("gemv", flops={"tensor_bf16": 2e10}, dram_bytes=4e9, time_s=2.5e-3)
        stamp = datetime(2026, 11, 1, 2, tzinfo=UTC) + timedelta(days=night)
        record = make_run(kernels=[gemv], commit=f"a{night:04d}", timestamp=stamp, device=A100)
        report = tmp_path / f"a{night}.json"
        report.write_text(record.model_dump_json(), encoding="utf-8")
        args = ["ingest", str(report), "--repo", "acme/kernels", "--commit", f"a{night:04d}"]
        args += ["--branch", "main", "--kind", "nightly", "--db", db]
        assert run([*args, "--config", str(after if night >= 8 else before)]) == 0
    report, out = _report(tmp_path / "h100.json", 12), tmp_path / "verdict.json"  # an H100
    args = ["check", str(report), "--repo", "acme/kernels", "--commit", "f00d", "--pr", "7"]
    args += ["--db", db, "--format", "json", "--output", str(out), "--config", str(after)]
    assert run(args) == 0
    verdict = json.loads(out.read_text())
    gemv = next(k for k in verdict["kernels"] if k["key"] == "gemv")
    assert gemv["baseline"]["device"] == A100
    assert gemv["baseline"]["history"] == pytest.approx([100 * (4e9 / 4.0e12) / 2.5e-3] * 12)
    # said as the run's own card's re-read is (NOTE): the A100's history said nothing of it
    assert A100_NOTE in verdict["notes"]
