"""``roofguard upload --timestamp``: a backfilled night is stored at the time it was measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from factories import make_kernel, make_run
from svc_helpers import Service, auth, free_port, start_live

from service.cli import run


def _args(report: Path, server: str, token: str, repo: str, commit: str) -> list[str]:
    return [
        *("upload", str(report), "--server", server, "--token", token, "--repo", repo),
        *("--commit", commit, "--kind", "nightly", "--format", "json"),
    ]


def test_upload_stores_the_run_at_the_timestamp_given(
    service: Service, repo: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without the flag, every night backfilled through the CLI was stored at upload time."""
    live = start_live(service.app)
    try:
        token = service.token(repo)
        report = tmp_path / "run.json"
        report.write_text(make_run(repo=None, kernels=[make_kernel("gemv")]).model_dump_json())
        for commit, given in (("a1b2c3d", "2026-03-04T02:30:00+02:00"), ("e4f5a6b", "2026-03-05")):
            args = [*_args(report, live.url, token, repo, commit), "--timestamp", given]
            assert run(args) == 0, capsys.readouterr().err
            run_id = json.loads(capsys.readouterr().out)["run_id"]
            stored = service.client.get(f"/api/v1/runs/{run_id}", headers=auth(token)).json()
            # a time naming no zone is UTC, as check takes it
            expected = "2026-03-04T00:30:00Z" if commit == "a1b2c3d" else "2026-03-05T00:00:00Z"
            assert stored["timestamp"] == expected
    finally:
        live.stop()


@pytest.mark.parametrize(
    ("given", "why"),
    [
        ("last tuesday", "--timestamp: 'last tuesday' is not an ISO-8601 timestamp"),
        ("2999-01-01T00:00:00Z", "--timestamp: 2999-01-01T00:00:00+00:00 is "),
        ("1970-01-01", "--timestamp: 1970-01-01T00:00:00+00:00 is before 2000"),
    ],
)
def test_upload_refuses_a_timestamp_as_check_does_before_sending(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], given: str, why: str
) -> None:
    """Refused before any request: the server named here answers none (nothing listens)."""
    report = tmp_path / "run.json"
    report.write_text(make_run(repo=None, kernels=[make_kernel("gemv")]).model_dump_json())
    server = f"http://127.0.0.1:{free_port()}"
    args = [*_args(report, server, "rgt_x", "acme/k", "a1b2c3d"), "--timestamp", given]
    assert run(args) == 2
    err = capsys.readouterr().err
    assert why in err and "cannot reach" not in err
    check = ["check", str(report), "--repo", "acme/k", "--commit", "a1b2c3d", "--timestamp", given]
    assert run([*check, "--db", f"sqlite:///{tmp_path / 'c.db'}"]) == 2
    assert why in capsys.readouterr().err
