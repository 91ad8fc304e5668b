"""A run measured on a runner that ran none of its baseline says so, through `roofguard check`."""

from __future__ import annotations

from pathlib import Path

import pytest

from rules.verdict import Verdict
from service.cli import run
from service.render.markdown import render_verdict
from service.render.sparklines import RUNNER_MARK
from service.render.story import runner_wide

NOTE = (
    "measured on runner gpu-b; its baseline's runs were on gpu-a (3): a move shared by many "
    "kernels may be the runner's"
)


def _check(
    tmp_path: Path,
    commit: str,
    runner: str | None,
    pr: bool = False,
    slower: bool = False,
    timed_only: bool = False,
    own: float = 1.0,
    mixed: bool = False,
) -> Verdict:
    """One check of 8 GEMMs, 6% slower as a PR or ``slower`` (a slower card), on ``runner``.

    ``timed_only``: benchmarks timed without work (no roof), judged on time; ``mixed``: the
    last 4 only. ``own``: gemm_3's time factor on top (a regression of its own).
    """
    card = 1.06 if pr or slower else 1

    def work(i: int) -> str:
        if timed_only:
            return ""
        return ",," if mixed and i >= 4 else ",1e10,1e8"

    rows = "".join(
        f"gemm_{i},{0.001 * (1 + i) * card * (own if i == 3 else 1)}{work(i)},1\n" for i in range(8)
    )
    report = tmp_path / f"{commit}.csv"
    columns = "duration_s" if timed_only else "duration_s,flops_fp32,bytes_dram"
    report.write_text(f"name,{columns},launches\n" + rows)
    out = tmp_path / f"{commit}.json"
    args = ["check", str(report), "--repo", "acme/swap", "--commit", commit, "--branch"]
    args += ["feat", "--pr", "7"] if pr else ["main", "--kind", "nightly"]
    args += ["--runner", runner] if runner else []
    db = f"sqlite:///{tmp_path / 'history.db'}"
    args += ["--device", "H100-SXM5", "--format", "json", "--db", db, "--output", str(out)]
    assert run(args) in (0, 1)
    return Verdict.model_validate_json(out.read_text())


def _swap_night(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, own: float = 1.0, **kinds: bool
) -> Verdict:
    """Three nights on gpu-a, then the first on gpu-b, a 6% slower card (``_check``'s kinds)."""
    monkeypatch.delenv("RUNNER_NAME", raising=False)
    for night in ("n1", "n2", "n3"):
        _check(tmp_path, night, "gpu-a", **kinds)
    return _check(tmp_path, "n4", "gpu-b", slower=True, own=own, **kinds)


@pytest.mark.parametrize(
    ("nights_on", "pr_on", "noted"),
    [
        ("gpu-a", "gpu-b", True),
        ("gpu-a", "gpu-a", False),
        ("gpu-a", None, False),
        (None, "gpu-b", False),
    ],
)
def test_a_pr_on_another_runner_than_its_baseline_is_noted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nights_on, pr_on, noted: bool
) -> None:
    monkeypatch.delenv("RUNNER_NAME", raising=False)  # the option's environment variable
    for night in ("n1", "n2", "n3"):
        _check(tmp_path, night, nights_on)
    verdict = _check(tmp_path, "pr1", pr_on, pr=True)
    assert [n for n in verdict.notes if n.startswith("measured on runner")] == (
        [NOTE] if noted else []
    )


def test_a_pool_of_runners_is_not_a_swap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nights rotating through three runners: a PR on a fourth is the pool, not a swap."""
    monkeypatch.delenv("RUNNER_NAME", raising=False)
    for night, runner in (("n1", "gpu-a"), ("n2", "gpu-c"), ("n3", "gpu-d")):
        _check(tmp_path, night, runner)
    assert not _check(tmp_path, "pr1", "gpu-b", pr=True).notes


def test_a_nightly_on_a_new_runner_is_noted_until_it_is_the_baselines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The nights after a swap fail (the move is confirmed): each says the runner changed.

    A nightly is stored before it is judged, so its own run is not counted as its baseline's.
    """
    first = _swap_night(tmp_path, monkeypatch)
    assert first.notes == (NOTE,)
    assert runner_wide(first) == (
        "runner-wide: 8 of 8 kernels below their levels (median -5.7%) "
        "on runner gpu-b, new to this baseline"
    )
    assert _check(tmp_path, "n5", "gpu-b", slower=True).notes == (
        "measured on runner gpu-b; it measured only the newest 1 of its baseline's runs; "
        "before them: gpu-a (3): a move shared by many kernels may be the runner's",
    )
    _check(tmp_path, "n6", "gpu-b", slower=True)
    settled = _check(tmp_path, "n7", "gpu-b", slower=True)
    assert not settled.notes  # 3 of its 6 runs: the baseline's runner now


def test_a_pair_taking_turns_is_not_a_swap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RUNNER_NAME", raising=False)
    for night, runner in (("n1", "gpu-a"), ("n2", "gpu-b"), ("n3", "gpu-a"), ("n4", "gpu-b")):
        _check(tmp_path, night, runner)
    assert not _check(tmp_path, "n5", "gpu-b").notes


def test_benchmarks_timed_alone_get_the_runner_wide_reading_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Judged on time (time-regression), a swap's slowdown was 8 warnings and no headline."""
    first = _swap_night(tmp_path, monkeypatch, timed_only=True)
    assert runner_wide(first) == (
        "runner-wide: 8 of 8 kernels slower than their levels (median +6.0% time) "
        "on runner gpu-b, new to this baseline"
    )
    [note] = [f for f in first.findings if f.kernel is None]
    assert note.rule == "time-regression" and note.numbers["measure"] == "time_s"
    assert "8 of 8 kernels judged on time are slower than their levels" in note.message


def test_a_suite_placed_and_timed_alone_says_both_moves_in_one_headline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Roof-drop and time-regression each note the swap; the headline showed only the first."""
    first = _swap_night(tmp_path, monkeypatch, own=1.25, mixed=True)
    assert sorted(f.rule for f in first.findings if f.kernel is None) == [
        "roof-drop",
        "time-regression",
    ]
    assert runner_wide(first) == (
        "runner-wide: 4 of 4 kernels below their levels (median -5.7%) and 4 of 4 kernels "
        "slower than their levels (median +6.0% time) on runner gpu-b, new to this baseline; "
        "beyond it: gemm_3 -24.5%"
    )


@pytest.mark.parametrize("timed_only", [False, True], ids=["placed", "timed alone"])
def test_a_kernel_beyond_the_shared_move_is_named_in_the_headline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, timed_only: bool
) -> None:
    """After a 6% slower card, gemm_3 25% slower on top: "30 of 30 below" hid it."""
    first = _swap_night(tmp_path, monkeypatch, own=1.25, timed_only=timed_only)
    headline = runner_wide(first)
    assert headline is not None and headline.startswith("runner-wide: 8 of 8 kernels")
    worst = "-24.5%" if not timed_only else "+32.5%"  # 1.06 x 1.25: of percent of roof; of time
    assert headline.endswith(f"on runner gpu-b, new to this baseline; beyond it: gemm_3 {worst}")
    [note] = [f for f in first.findings if f.kernel is None]
    assert note.numbers["kernels_beyond"] == 1 and note.numbers["worst_beyond_kernel"] == "gemm_3"
    assert note.message.endswith("; beyond that move: gemm_3 (" + worst + ")")


# ---- the trend marks where the new runner's runs begin


def _trends(verdict: Verdict) -> dict[str, str]:
    """Each kernel row's Trend cell of the PR comment."""
    markdown = render_verdict(verdict)
    rows = [
        line.split(" | ")
        for line in markdown.splitlines()
        if line.startswith("| ") and "`gemm_" in line
    ]
    return {cells[1].strip("`"): cells[-2] for cells in rows}


@pytest.mark.parametrize("timed_only", [False, True], ids=["placed", "timed alone"])
def test_the_trend_marks_the_first_run_on_the_new_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, timed_only: bool
) -> None:
    first = _swap_night(tmp_path, monkeypatch, timed_only=timed_only)
    assert {k.baseline.runner_since for k in first.kernels if k.baseline} == {3}  # n1-n3: gpu-a
    trends = _trends(first)
    assert len(trends) == 8 and all(RUNNER_MARK in trend for trend in trends.values())
    assert all(trend.index(RUNNER_MARK) == 3 for trend in trends.values())
    legend = "¦ in a trend\\: the first run on runner gpu\\-b\\, new to this baseline\\."
    assert legend in render_verdict(first)  # markdown-escaped
    second = _check(tmp_path, "n5", "gpu-b", slower=True, timed_only=timed_only)
    assert {k.baseline.runner_since for k in second.kernels if k.baseline} == {3}  # n4: gpu-b


def test_no_mark_without_a_swap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RUNNER_NAME", raising=False)
    for night in ("n1", "n2", "n3"):
        _check(tmp_path, night, "gpu-a")
    verdict = _check(tmp_path, "pr1", "gpu-a", pr=True)
    assert all(k.baseline.runner_since is None for k in verdict.kernels if k.baseline)
    assert RUNNER_MARK not in render_verdict(verdict)
