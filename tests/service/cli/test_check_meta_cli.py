"""What `check` is told about a run beside its reports: its time, its device, its branch."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from factories import make_kernel, make_run

from service.cli import run
from service.store.db import open_store, session_scope
from service.store.queries import RunSummary, list_runs

REPO = "acme/kernels"


def _report(tmp_path: Path, **fields: Any) -> Path:
    path = tmp_path / "run.json"
    record = make_run(kernels=[make_kernel("gemv", time_s=1e-3)], **fields)
    path.write_text(record.model_dump_json())
    return path


def _check(tmp_path: Path, report: Path, *extra: str) -> tuple[int, dict[str, Any] | None, str]:
    db = f"sqlite:///{tmp_path / 'h.db'}"
    out = tmp_path / "verdict.json"
    args = ["check", str(report), "--repo", REPO, "--commit", "c1", "--db", db]
    code = run([*args, "--format", "json", "--output", str(out), *extra])
    return code, json.loads(out.read_text()) if out.exists() else None, db


def _stored(db: str) -> list[RunSummary]:
    engine = open_store(db)
    with session_scope(engine, readonly=True) as session:
        runs = list_runs(session=session, repo=REPO)
    engine.dispose()
    return runs


def test_check_takes_the_time_of_the_run_as_ingest_does(tmp_path: Path) -> None:
    report = _report(tmp_path, timestamp=datetime(2026, 11, 2, tzinfo=UTC))
    code, _, db = _check(tmp_path, report, "--timestamp", "2026-11-20T03:04:05")
    assert code == 0
    (stored,) = _stored(db)
    assert stored.timestamp.replace(tzinfo=UTC) == datetime(2026, 11, 20, 3, 4, 5, tzinfo=UTC)


def test_a_bad_timestamp_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, verdict, _ = _check(tmp_path, _report(tmp_path), "--timestamp", "yesterday")
    assert code == 2 and verdict is None
    assert "--timestamp: 'yesterday' is not an ISO-8601 timestamp" in capsys.readouterr().err
