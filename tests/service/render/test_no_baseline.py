"""A run judged against no baseline says so: headline, ``baseline.runs`` and a neutral check.

An empty store (a first run, or a store the job does not keep) makes every kernel ``new``;
that verdict used to read "PASS · 0 regressions" and publish a green check.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from demo_cli import check_demo_pr, demo_db

from rules.verdict import KernelStatus, Verdict
from service.cli import run
from service.github.policy import FailurePolicy, check_conclusion
from service.render.markdown import VISIBLE_ROWS, render_check_summary
from service.render.markdown import render_verdict as render_markdown


def check(db: str, fmt: str) -> str:
    return check_demo_pr(db, "--format", fmt)


@pytest.fixture()
def empty_db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'empty.db'}"


def test_a_run_judged_against_nothing_says_so_and_its_check_is_neutral(empty_db: str) -> None:
    verdict = Verdict.model_validate_json(check(empty_db, "json"))
    n = sum(1 for k in verdict.kernels)
    assert verdict.baseline is not None and verdict.baseline.runs == 0
    markdown = render_markdown(verdict)
    assert f"no baseline yet: {n} kernels stored, nothing judged" in markdown
    assert check_conclusion(verdict, FailurePolicy.ON_REGRESSION) == "neutral"
    # Its title was "✅ roofguard: no regressions" and "**PASS**" above "nothing judged".
    assert "## ⚪ roofguard: nothing judged yet on H100\\-SXM5" in markdown
    assert "**NOT JUDGED**" in markdown and "✅" not in markdown and "PASS" not in markdown
    assert verdict.conclusion == "pass"  # the JSON contract keeps the conclusion


def test_a_first_run_is_a_roofline_snapshot_without_empty_baseline_columns(
    empty_db: str,
) -> None:
    """Every row read "new | — | (no trend)" under Baseline, Change and Trend, then a footnote."""
    markdown = render_markdown(Verdict.model_validate_json(check(empty_db, "json")))
    header = next(line for line in markdown.splitlines() if line.startswith("| | Kernel |"))
    assert header == (
        "| | Kernel | GPU time | Time | Regime (binding) | Intensity | % of roof now | Verdict |"
    )
    assert "Baseline\\:" not in markdown


def test_the_terminal_headline_says_so_too(empty_db: str) -> None:
    head = check(empty_db, "text").splitlines()[0]
    assert head.startswith("roofguard: NOT JUDGED · no baseline yet:") and "nothing judged" in head


def test_a_run_with_history_counts_its_baseline_runs(tmp_path_factory) -> None:
    verdict = Verdict.model_validate_json(check(demo_db(tmp_path_factory, "runs"), "json"))
    assert verdict.baseline is not None and verdict.baseline.runs >= 14
    assert "no baseline yet" not in render_markdown(verdict)


def _first_run(tmp_path: Path, kernels: int) -> Verdict:
    """A first run's verdict: ``kernels`` placed GEMMs, heavier by index, and one unplaced."""
    rows = "".join(f"gemm_{i:02d},{0.001 * (1 + i)},1e10,1e8,1\n" for i in range(kernels))
    report = tmp_path / "run.csv"
    report.write_text(
        "name,duration_s,flops_fp32,bytes_dram,launches\n"
        + rows
        + "nocounters_kernel,0.00001,,2.854e7,1\n"
    )
    out = tmp_path / "verdict.json"
    args = ["check", str(report), "--repo", "acme/kernels", "--commit", "c0ffee", "--branch"]
    args += ["main", "--kind", "nightly", "--device", "H100-SXM5", "--format", "json"]
    args += ["--db", f"sqlite:///{tmp_path / 'first.db'}", "--output", str(out)]
    assert run(args) == 0
    return Verdict.model_validate_json(out.read_text())


def test_a_first_run_lists_its_heaviest_kernels_and_counts_the_rest(tmp_path: Path) -> None:
    """The first snapshot of the roofline, not a comment filled to its limit with new rows."""
    verdict = _first_run(tmp_path, VISIBLE_ROWS + 15)
    markdown = render_markdown(verdict)
    listed = [line for line in markdown.splitlines() if line.startswith("| 🆕 |")]
    heaviest = [f"gemm_{i:02d}" for i in range(VISIBLE_ROWS + 14, 14, -1)]
    assert [line.split("`")[1] for line in listed[:VISIBLE_ROWS]] == heaviest
    assert "nocounters_kernel" in listed[-1], "a kernel it could not place is still shown"
    assert "🆕 15 more new kernels stored (" in markdown and "left out" not in markdown
    summary = render_check_summary(verdict)
    assert "🆕 15 more new kernels stored (" in summary and "…and 11 more new kernels" in summary


def test_a_first_run_of_few_kernels_lists_them_all(tmp_path: Path) -> None:
    markdown = render_markdown(_first_run(tmp_path, 5))
    assert sum(line.startswith("| 🆕 |") for line in markdown.splitlines()) == 6
    assert "more new kernel" not in markdown


def _night(
    tmp_path: Path,
    db: str,
    commit: str,
    slow: int = -1,
    pr: bool = False,
    kernels: int = 30,
    extra: tuple[str, ...] = (),
) -> Verdict:
    """One check of ``kernels`` GEMMs (kernel ``slow`` 3x slower) as a nightly, or as a PR."""
    rows = "".join(
        f"gemm_{i:02d},{0.001 * (1 + i) * (3 if i == slow else 1)},1e10,1e8,1\n"
        for i in range(kernels)
    )
    report = tmp_path / f"{commit}.csv"
    report.write_text("name,duration_s,flops_fp32,bytes_dram,launches\n" + rows)
    out = tmp_path / f"{commit}.json"
    args = ["check", str(report), "--repo", "acme/kernels", "--commit", commit, "--branch"]
    args += ["feat", "--pr", "7"] if pr else ["main", "--kind", "nightly"]
    args += ["--device", "H100-SXM5", "--format", "json", "--db", db, "--output", str(out)]
    assert run([*args, *extra]) in (0, 1)
    return Verdict.model_validate_json(out.read_text())


def test_a_baseline_shorter_than_the_gate_needs_judges_nothing_and_says_so(
    tmp_path: Path, empty_db: str
) -> None:
    """One nightly, then a PR with a GEMM 3x slower: not a silent "unchanged" pass."""
    _night(tmp_path, empty_db, "n1")
    verdict = _night(tmp_path, empty_db, "pr1", slow=3, pr=True)
    base = verdict.baseline
    assert base is not None and (base.runs, base.min_runs) == (1, 3)
    assert verdict.judged_nothing and {k.status for k in verdict.kernels} == {KernelStatus.NEW}
    assert check_conclusion(verdict, FailurePolicy.ON_REGRESSION) == "neutral"
    markdown = render_markdown(verdict)
    assert "baseline too short: 1 of the 3 runs the gate needs; 30 kernels stored" in markdown
    rows = [line for line in markdown.splitlines() if line.startswith("| 🆕 |")]
    assert "`gemm_03`" in rows[0] and "(n=1)" in rows[0] and "−66.7%" in rows[0]
    assert rows[0].endswith("| new\\: too few runs to judge |")
    assert "their baseline has too few runs to judge them yet" in markdown


def test_from_the_runs_the_gate_needs_a_run_is_judged(tmp_path: Path, empty_db: str) -> None:
    for night in ("n1", "n2", "n3"):
        _night(tmp_path, empty_db, night)
    verdict = _night(tmp_path, empty_db, "pr1", pr=True)
    assert not verdict.judged_nothing and "too short" not in render_markdown(verdict)
    assert {k.status for k in verdict.kernels} == {KernelStatus.UNCHANGED}


def test_a_kernel_younger_than_the_gate_needs_is_new_in_a_judged_run(tmp_path, empty_db):
    """gemm_30 joined a night ago: 3x slower on the PR is not "unchanged" beside judged ones."""
    for night in ("n1", "n2", "n3"):
        _night(tmp_path, empty_db, night)
    _night(tmp_path, empty_db, "n4", kernels=31)
    verdict = _night(tmp_path, empty_db, "pr1", slow=30, pr=True, kernels=31)
    statuses = {k.name: k.status for k in verdict.kernels}
    assert not verdict.judged_nothing and statuses.pop("gemm_30") == KernelStatus.NEW
    assert set(statuses.values()) == {KernelStatus.UNCHANGED}
    first_row = next(ln for ln in render_markdown(verdict).splitlines() if ln.startswith("| 🆕 |"))
    assert "`gemm_30`" in first_row and "(n=1)" in first_row


def test_a_merge_base_without_a_stored_run_is_noted(tmp_path: Path, empty_db: str) -> None:
    """The baseline then runs to main's newest night, past where the branch left it."""
    for night in ("n1", "n2", "n3", "n4"):
        _night(tmp_path, empty_db, night)
    unknown = _night(tmp_path, empty_db, "pr1", pr=True, extra=("--base-sha", "deadbeef"))
    assert unknown.notes == (
        "merge base deadbeef has no stored main run: judged against the newest main runs, "
        "which may hold changes merged after this branch left it",
    )
    known = _night(tmp_path, empty_db, "pr2", pr=True, extra=("--base-sha", "n3"))
    assert known.baseline is not None and known.baseline.commits == ("n1", "n3")
    assert not known.notes


def test_a_merge_base_without_a_stored_run_cuts_at_its_commit_time(
    tmp_path: Path, empty_db: str
) -> None:
    """With --base-time the baseline holds only the nights measured up to the merge base."""
    for day, night in enumerate(("n1", "n2", "n3", "n4", "n5"), start=1):
        _night(tmp_path, empty_db, night, extra=("--timestamp", f"2026-11-0{day}T02:00:00Z"))
    base = ("--base-sha", "deadbeef", "--base-time", "2026-11-03T16:45:00+02:00")
    verdict = _night(tmp_path, empty_db, "pr1", pr=True, extra=base)
    assert verdict.baseline is not None and verdict.baseline.commits == ("n1", "n3")
    assert verdict.notes == (
        "merge base deadbeef has no stored main run: judged against the main runs measured "
        "up to its commit time, 2026-11-03 14:45 UTC",
    )


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        (("--base-time", "2026-11-03T16:45:00Z"), "--base-time: give the merge base's commit"),
        (("--base-sha", "n1", "--base-time", "yesterday"), "--base-time: 'yesterday' is not"),
    ],
)
def test_a_base_time_without_its_commit_or_not_a_time_is_refused(
    tmp_path: Path, empty_db: str, capsys: pytest.CaptureFixture[str], extra, error: str
) -> None:
    report = tmp_path / "r.csv"
    report.write_text("name,duration_s,flops_fp32,bytes_dram,launches\ngemm,0.001,1e10,1e8,1\n")
    args = ["check", str(report), "--repo", "acme/kernels", "--commit", "c1", "--pr", "7"]
    assert run([*args, "--device", "H100-SXM5", "--db", empty_db, *extra]) == 2
    assert error in capsys.readouterr().err
