"""One root cause, one finding, one set of figures: the demo's broken fusion through `check`.

The demo's PR makes the verify GEMM fall off the tensor cores: regime-flip, roof-drop and
time-regression of that kernel, and the roof-drop of its group, are one cause. The verdict
counts it once, shows the kernel's other findings inside its first, and every figure of the
rows and of the findings comes from one source.
"""

from __future__ import annotations

import pytest
from demo_cli import VERIFY, demo_db
from test_time_verdict import check

from rules.verdict import KernelStatus, Severity, Verdict
from service.render.judged import judged_group
from service.render.markdown import render_verdict
from service.render.text import render_verdict_text


@pytest.fixture(scope="module")
def verdict(tmp_path_factory) -> Verdict:
    return Verdict.model_validate_json(
        check(demo_db(tmp_path_factory, "cause"), "--format", "json")
    )


def test_one_broken_kernel_is_one_regression(verdict: Verdict) -> None:
    assert verdict.regression_count == "1 regression"
    assert "**FAIL** · 1 regression, " in render_verdict(verdict)
    assert render_verdict_text(verdict).startswith("roofguard: FAIL · 1 regression, ")


def test_the_kernels_other_findings_are_the_evidence_of_its_first(verdict: Verdict) -> None:
    markdown = render_verdict(verdict)
    assert markdown.count("<summary>❌ regime-flip: <code>verify_gemm") == 1
    assert "(with roof-drop, time-regression)</summary>" in markdown
    assert "Evidence of the same cause:" in markdown
    text = render_verdict_text(verdict)
    assert f"  and roof-drop: {VERIFY}:" in text and f"❌ roof-drop: {VERIFY}" not in text


def test_a_group_that_lost_its_percent_of_roof_is_not_reported_again_as_mfu(
    verdict: Verdict,
) -> None:
    by_group: dict[str, list[str]] = {}
    for f in verdict.findings:
        if f.kernel and f.kernel.startswith("group:"):
            by_group.setdefault(f.kernel, []).append(f.measure or "")
    assert by_group.get("group:speculative verify") == ["percent_of_roof"]  # not MFU again
    # A broken fusion in a memory-bound group keeps each kernel's percent of roof: only its
    # time shows it, and that is what such a group is judged on (not MFU: FLOPs don't bound it).
    assert by_group.get("group:elementwise") == ["time_s"]


def test_a_memory_bound_group_is_judged_on_its_time_in_plain_words(verdict: Verdict) -> None:
    finding = next(f for f in verdict.findings if f.kernel == "group:elementwise")
    gate = finding.gate
    assert gate is not None
    ratio = gate.current / gate.level  # recomputable from the verdict's figures
    assert f"takes {ratio:.2f}× its baseline time (" in finding.message
    assert "a fusion broke?" in finding.message and "MFU" not in finding.message
    # The group's row shows the level its time was judged against, and the same ratio.
    row = judged_group(next(g for g in verdict.groups if g.name == "elementwise"), [finding])
    assert row.baseline is not None and row.baseline.time_s == pytest.approx(gate.level)
    assert row.time_ratio == pytest.approx(ratio)


def test_figures_agree_between_the_table_and_the_findings(verdict: Verdict) -> None:
    missing = next(k for k in verdict.kernels if k.status == KernelStatus.MISSING)
    finding = next(f for f in verdict.findings if f.rule == "missing-kernel")
    assert missing.baseline is not None
    assert finding.numbers["baseline_time_s"] == pytest.approx(missing.baseline.time_s)
    new = next(f for f in verdict.findings if f.rule == "new-kernel")
    assert "(<0.1% of GPU time)" in new.message
    text = render_verdict_text(verdict)
    for jargon in ("segment start", "\nrun ", "confirm runs"):
        assert jargon not in text
    assert "level measured since" in text
    assert all(f.severity != Severity.FAIL or f.counts for f in verdict.findings)


def test_regime_flip_quotes_the_gates_level_as_roof_drop_does(verdict: Verdict) -> None:
    flip = next(f for f in verdict.findings if f.rule == "regime-flip")
    drop = next(f for f in verdict.findings if f.rule == "roof-drop" and f.kernel == flip.kernel)
    slower = next(f for f in verdict.findings if f.rule == "time-regression")
    level = drop.gate
    assert level is not None
    assert flip.numbers["baseline_percent_of_roof"] == pytest.approx(level.level)
    assert flip.numbers["baseline_n"] == level.n
    assert flip.numbers["baseline_time_s"] == pytest.approx(slower.numbers["baseline_time_s"])
    assert f"level {level.level:.1f}% over {level.n} runs → " in flip.message
