"""A kernel called twice as often is named, through `roofguard check`.

Before, a PR in which one GEMM ran twice the launches (twice the FLOPs, twice the time) read
"GPU time 10.1 → 13.0 ms (1.29×)" above "All 4 kernel(s) unchanged": its percent of roof
had not moved.
"""

from __future__ import annotations

from pathlib import Path

from csv_checks import check_csv

from rules.verdict import Verdict
from service.render.text import render_verdict_text


def _pr(tmp_path: Path, factor: float) -> Verdict:
    """4 GEMMs nightly, then a PR in which gemm_2 does ``factor`` times its work and time."""
    for night in range(5):
        rows = "".join(f"gemm_{i},{0.001 * (1 + i)},1e10,1e8,10\n" for i in range(4))
        check_csv(tmp_path, "acme/work", f"n{night}", rows)
    rows = "".join(
        f"gemm_{i},{0.001 * (1 + i) * (factor if i == 2 else 1)},"
        f"{1e10 * (factor if i == 2 else 1)},1e8,10\n"
        for i in range(4)
    )
    return check_csv(tmp_path, "acme/work", "pr", rows, "--branch", "feat", "--pr", "5")


def test_twice_the_launches_is_named_beside_the_gpu_time(tmp_path) -> None:
    verdict = _pr(tmp_path, 2.0)
    [finding] = [f for f in verdict.findings if f.rule == "work-change"]
    assert finding.kernel == "gemm_2" and finding.numbers["work_ratio"] == 2.0
    text = render_verdict_text(verdict)
    assert "GPU time 10.0 → 13.0 ms (1.30×)" in text
    assert "PASS · 0 regressions, 0 warning(s), 1 preview finding(s) on" in text  # as markdown
    assert "gemm_2: 2e+10 FLOPs where its baseline did 1e+10 (2.00×), in 2.00× the time" in text


def test_the_same_work_names_nothing(tmp_path) -> None:
    assert not [f for f in _pr(tmp_path, 1.0).findings if f.rule == "work-change"]
