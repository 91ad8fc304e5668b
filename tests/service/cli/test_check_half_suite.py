"""A run of only part of the suite does not read as a speed-up, through `roofguard check`.

A benchmark binary that crashed halfway ran half the kernels: the headline's GPU time read
`40.4 → 20.0 ms (0.50×)`, a 2x speed-up, beside 1,000 missing-kernel warnings.
"""

from __future__ import annotations

from pathlib import Path

from csv_checks import check_csv

from rules.verdict import Verdict
from service.render.markdown import render_verdict
from service.render.text import render_verdict_text


def _check(tmp_path: Path, commit: str, kernels: range, *extra: str) -> Verdict:
    """A check of GEMMs ``kernels``, 1 ms each."""
    rows = "".join(f"gemm_{i},0.001,1e10,1e8,1\n" for i in kernels)
    return check_csv(tmp_path, "acme/half", commit, rows, *extra)


def _pr(tmp_path: Path, kernels: range) -> Verdict:
    for night in range(5):
        _check(tmp_path, f"n{night}", range(20))
    return _check(tmp_path, "pr", kernels, "--branch", "feat", "--pr", "9")


def test_half_the_suite_missing_is_said_beside_the_gpu_time(tmp_path) -> None:
    verdict = _pr(tmp_path, range(10))
    story = (
        "GPU time 20.0 → 10.0 ms (0.50×), not the same kernels: 10 missing (10.0 ms at "
        "baseline); 1.00× over the 10 in both"
    )
    assert story in render_verdict_text(verdict)
    markdown = render_verdict(verdict)  # the same words, escaped for GitHub
    assert (
        "0\\.50×\\)\\, not the same kernels\\: 10 missing \\(10\\.0 ms at baseline\\)" in markdown
    )


def test_kernels_added_are_said_too(tmp_path) -> None:
    verdict = _pr(tmp_path, range(25))
    assert (
        "GPU time 20.0 → 25.0 ms (1.25×), not the same kernels: 5 new (5.00 ms); 1.00× over "
        "the 20 in both"
    ) in render_verdict_text(verdict)


def test_one_kernel_of_twenty_missing_leaves_the_gpu_time_alone(tmp_path) -> None:
    verdict = _pr(tmp_path, range(19))  # 5% of the time: the totals still compare
    assert "not the same kernels" not in render_verdict_text(verdict)
    assert "GPU time 20.0 → 19.0 ms (0.95×)" in render_verdict_text(verdict)


def test_kernels_of_a_baseline_too_short_to_judge_are_not_new_to_it(tmp_path) -> None:
    for night in range(2):  # fewer than min_runs: stored, none judged
        _check(tmp_path, f"n{night}", range(20))
    rows = "".join(f"gemm_{i},0.002,1e10,1e8,1\n" for i in range(20))  # 2x the time
    verdict = check_csv(tmp_path, "acme/half", "pr", rows, "--branch", "feat", "--pr", "9")
    text = render_verdict_text(verdict)
    assert "GPU time 20.0 → 40.0 ms (2.00×)" in text and "not the same kernels" not in text
