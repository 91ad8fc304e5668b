"""`roofguard check` reads the calibration: the runner's measured roof and its health verdict."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from calibrate_factories import make_ceilings, scaled

from service.calibrate.health import decide_health
from service.calibrate.storage import save_ceilings, write_json_atomic
from service.cli import run
from service.cli.common import store_session
from tests.factories import make_kernel, make_run

MEASURED = make_ceilings(
    bandwidth={"dram": 3.0e12}, peaks={"tensor_bf16": 700e12, "fp32": 50e12}, runner="gpu-7"
)


def nightly(path: Path, night: int, scale: float = 1.0) -> Path:
    gemv = make_kernel("gemv", flops={"tensor_bf16": 2e10}, dram_bytes=4e9, time_s=1.5e-3 * scale)
    ts = datetime(2026, 11, 1, 2, tzinfo=UTC) + timedelta(days=night)
    path.write_text(
        make_run(kernels=[gemv], commit=f"c{night:04d}", timestamp=ts).model_dump_json(),
        encoding="utf-8",
    )
    return path


@pytest.fixture
def history(tmp_path):
    db = f"sqlite:///{tmp_path / 'h.db'}"
    for night in range(8):
        report = nightly(tmp_path / f"n{night}.json", night, scale=1 + 0.01 * (night % 3))
        assert (
            run(
                [
                    "ingest",
                    str(report),
                    "--repo",
                    "acme/kernels",
                    "--commit",
                    f"c{night:04d}",
                    "--branch",
                    "main",
                    "--kind",
                    "nightly",
                    "--db",
                    db,
                ]
            )
            == 0
        )
    with store_session(db) as session:
        save_ceilings(session=session, ceilings=MEASURED)
    return tmp_path, db


def check(tmp_path: Path, db: str, *extra: str) -> tuple[int, dict]:
    out = tmp_path / "verdict.json"
    # gemv 40 % slower, far beyond noise: roof-drop fails at once (no re-measure step).
    report = nightly(tmp_path / "pr.json", 9, scale=1.40)
    code = run(
        [
            "check",
            str(report),
            "--repo",
            "acme/kernels",
            "--commit",
            "f00d",
            "--pr",
            "7",
            "--db",
            db,
            "--format",
            "json",
            "--output",
            str(out),
            *extra,
        ]
    )
    return code, json.loads(out.read_text())


def test_without_a_preflight_the_slow_pr_fails(history):
    tmp_path, db = history
    code, verdict = check(tmp_path, db, "--health-file", str(tmp_path / "absent.json"))
    assert code == 1 and verdict["conclusion"] == "fail"


def test_a_degraded_runner_draws_no_regression_verdict(history, capsys):
    tmp_path, db = history
    health_path = tmp_path / ".roofguard" / "health.json"
    write_json_atomic(health_path, decide_health(current=scaled(MEASURED, 0.6), stored=MEASURED))
    code, verdict = check(tmp_path, db, "--health-file", str(health_path))
    assert code == 0 and verdict["conclusion"] != "fail"
    assert not [f for f in verdict["findings"] if f["rule"] == "roof-drop"]
    assert any("health preflight" in note for note in verdict["notes"])
    assert "runner untrusted" in capsys.readouterr().err


def test_a_healthy_runner_is_judged_as_usual(history):
    tmp_path, db = history
    health_path = tmp_path / "health.json"
    write_json_atomic(health_path, decide_health(current=scaled(MEASURED, 0.95), stored=MEASURED))
    code, verdict = check(tmp_path, db, "--health-file", str(health_path))
    assert code == 1 and verdict["conclusion"] == "fail"


def test_measured_roof_source_uses_the_runners_calibration(history):
    tmp_path, db = history
    config = tmp_path / "roofguard.toml"
    config.write_text('roof = "measured"\n')
    missing = tmp_path / "none.json"
    code, verdict = check(
        tmp_path, db, "--config", str(config), "--runner", "gpu-7", "--health-file", str(missing)
    )
    gemv = next(k for k in verdict["kernels"] if k["key"] == "gemv")
    # Judged against the measured 700 TFLOP/s bf16 and 3 TB/s, not the datasheet's figures.
    # (No baseline was judged on the measured roof yet, so nothing is compared: exit 0.)
    assert code == 0 and verdict["roof"] == "H100-SXM5 (measured)"
    assert verdict["roofs"] == ["H100-SXM5 (measured)", "H100-SXM5 (datasheet)"]
    assert gemv["t_roof_s"] == pytest.approx(max(2e10 / 700e12, 4e9 / 3.0e12))
    code, _ = check(
        tmp_path, db, "--config", str(config), "--runner", "gpu-8", "--health-file", str(missing)
    )
    assert code == 2  # no calibration for that runner: a clear error, not the datasheet
