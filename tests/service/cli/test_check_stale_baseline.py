"""A baseline weeks older than the run's starting point says so, through `roofguard check`.

When the nightly job stopped, a PR was judged against nightly runs weeks older than its
branch, every change merged in between read as the PR's, and nothing in the verdict said so.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from csv_checks import check_csv

from rules.verdict import Verdict
from service.cli import run
from service.render.markdown import render_verdict

FIRST = datetime(2026, 10, 1, 2, 0, tzinfo=UTC)


def _check(tmp_path: Path, commit: str, day: int, *extra: str) -> Verdict:
    """4 GEMMs measured ``day`` days after ``FIRST``; a nightly check unless ``extra``."""
    rows = "".join(f"gemm_{i},{0.001 * (1 + i)},1e10,1e8,1\n" for i in range(4))
    stamp = (FIRST + timedelta(days=day)).isoformat()
    branch = list(extra) or ["--branch", "main", "--kind", "nightly"]
    return check_csv(tmp_path, "acme/stale", commit, rows, *branch, "--timestamp", stamp)


def _nights(tmp_path: Path, count: int = 10) -> None:
    for day in range(count):
        _check(tmp_path, f"n{day:03d}", day)


def _pr(tmp_path: Path, day: int, *base: str) -> Verdict:
    return _check(tmp_path, f"pr{day}", day, "--branch", "feat", "--pr", "3", *base)


def _stale(verdict: Verdict) -> list[str]:
    return [n for n in verdict.notes if n.startswith("the newest baseline run")]


def test_a_pr_three_weeks_after_the_last_night_is_told_so(tmp_path) -> None:
    _nights(tmp_path)
    verdict = _pr(tmp_path, 30)
    [note] = _stale(verdict)
    assert note == (
        "the newest baseline run (2026-10-10, commit n009) is 21 days older than this run: "
        "changes merged in between read as this run's; is the nightly job still running?"
    )
    assert "21 days older than this run" in render_verdict(verdict)


def test_the_merge_base_time_is_the_starting_point(tmp_path) -> None:
    _nights(tmp_path)
    base_time = (FIRST + timedelta(days=12)).isoformat()
    fresh = _pr(tmp_path, 30, "--base-sha", "abc1234", "--base-time", base_time)
    assert not _stale(fresh), "the branch left main 3 days after its last night"
    base_time = (FIRST + timedelta(days=25)).isoformat()
    old = _pr(tmp_path, 31, "--base-sha", "abc1234", "--base-time", base_time)
    [note] = _stale(old)
    assert "is 16 days older than this branch's merge base" in note


@pytest.mark.parametrize("day", [10, 16])
def test_a_fresh_baseline_or_a_stored_merge_base_says_nothing(tmp_path, day) -> None:
    _nights(tmp_path)
    assert not _stale(_pr(tmp_path, day))  # 1 and 7 days after the last night
    assert not _stale(_pr(tmp_path, 60, "--base-sha", "n005"))  # judged up to its own run


def test_a_nightly_run_after_a_gap_is_told_so(tmp_path) -> None:
    _nights(tmp_path)
    [note] = _stale(_check(tmp_path, "n100", 20))
    assert "is 11 days older than this run" in note


def test_nights_on_another_card_are_named_not_a_stopped_job(tmp_path) -> None:
    """The runner moved to an A100 for three weeks, then back: the H100's baseline is old,
    and the note asked whether the nightly job was still running; it ran, on the A100."""
    from csv_checks import HEADER

    from service.cli import run

    _nights(tmp_path)
    report = tmp_path / "a100.csv"
    report.write_text(HEADER + "".join(f"gemm_{i},0.002,1e10,1e8,1\n" for i in range(4)))
    db = f"sqlite:///{tmp_path / 'history.db'}"
    for day in range(12, 30):
        stamp = (FIRST + timedelta(days=day)).isoformat()
        args = ["check", str(report), "--repo", "acme/stale", "--commit", f"a{day:03d}"]
        args += ["--branch", "main", "--kind", "nightly", "--timestamp", stamp]
        args += ["--device", "A100-SXM4-80GB", "--db", db, "--output", str(tmp_path / "a.md")]
        assert run(args) in (0, 1)
    back = _check(tmp_path, "n030", 30)  # the H100's next night
    [note] = _stale(back)
    assert note == (
        "the newest baseline run (2026-10-10, commit n009) is 21 days older than this run: "
        "changes merged in between read as this run's; the nightly runs measured "
        "A100-SXM4-80GB from 2026-10-13, not H100-SXM5"
    )


@pytest.mark.parametrize("command", ["check", "upload"])
def test_a_revision_expression_is_no_merge_base(tmp_path, capsys, command: str) -> None:
    """``--base-sha HEAD~1`` matched no stored run, and the PR was judged on the newest nights.

    The service refused it, ``check`` took it; both now say so before reading any report
    (``upload`` is pointed at a port nothing listens on: it never sends).
    """
    report = tmp_path / "run.csv"
    report.write_text("not read\n")
    target = ["--db", f"sqlite:///{tmp_path / 'h.db'}"]
    if command == "upload":
        target = ["--server", "http://127.0.0.1:9", "--token", "t"]
    args = [command, str(report), "--repo", "acme/stale", "--commit", "pr1", "--pr", "3"]
    assert run([*args, *target, "--base-sha", "HEAD~1"]) == 2
    error = capsys.readouterr().err
    assert "--base-sha: 'HEAD~1' is not a commit: pass its SHA" in error, error
    assert not (tmp_path / "h.db").exists()
