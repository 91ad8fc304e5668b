"""Kernels profiled without their counters are named, through `roofguard check`.

Before, a PR whose profile lost its FLOP and byte counters for every kernel read
"All 12 kernel(s) unchanged": each kernel was judged on its time alone, silently. Then the
finding was a preview one, and a kernel that lost one kind of counter (its regime) none:
"PASS, all kernels unchanged" on a GEMM with no regime.
"""

from __future__ import annotations

from pathlib import Path

from csv_checks import check_csv

from rules.verdict import Verdict
from service.render.markdown import render_verdict


def _check(tmp_path: Path, commit: str, counted: range, *extra: str, lost: str = ",") -> Verdict:
    """12 GEMMs, those in ``counted`` with FLOP and byte counts, the others with ``lost``."""
    rows = "".join(f"gemm_{i},0.001,{'1e10,1e8' if i in counted else lost},1\n" for i in range(12))
    return check_csv(tmp_path, "acme/lost", commit, rows, *extra)


def _pr(tmp_path: Path, counted: range, lost: str = ",") -> Verdict:
    for night in range(4):
        _check(tmp_path, f"n{night}", range(12))
    return _check(tmp_path, "pr", counted, "--branch", "feat", "--pr", "4", lost=lost)


def test_a_profile_without_counters_is_one_finding_for_the_run(tmp_path) -> None:
    verdict = _pr(tmp_path, range(0))
    [finding] = [f for f in verdict.findings if f.rule == "lost-counters"]
    assert finding.kernel is None and finding.numbers["kernels_lost"] == 12
    assert finding.message.startswith(
        "12 kernels (100.0% of GPU time) on the roof in the newest baseline run are off it now"
    )
    markdown = render_verdict(verdict)  # a warning: the run cannot read "all unchanged"
    assert "**WARN** · 0 regressions, 1 warning" in markdown and "preview" not in markdown


def test_two_kernels_off_the_roof_are_named_each(tmp_path) -> None:
    verdict = _pr(tmp_path, range(2, 12))
    lost = sorted(f.kernel for f in verdict.findings if f.rule == "lost-counters")
    assert lost == ["gemm_0", "gemm_1"]


def test_a_gemm_that_lost_its_flop_counts_is_named_with_its_regime(tmp_path) -> None:
    verdict = _pr(tmp_path, range(1, 12), lost=",1e8")  # bytes kept: a memory-only figure
    [finding] = [f for f in verdict.findings if f.rule == "lost-counters"]
    assert finding.kernel == "gemm_0" and verdict.conclusion == "warn"
    assert "no regime now: " in finding.message and "a regime flip goes unseen" in finding.message
    assert "FLOP counts (no FLOP counters or declared work)" in finding.message


def test_a_kernel_with_zero_flops_counted_has_lost_nothing(tmp_path) -> None:
    verdict = _pr(tmp_path, range(1, 12), lost="0,1e8")  # counted, and zero: a copy now
    assert not [f for f in verdict.findings if f.rule == "lost-counters"]
