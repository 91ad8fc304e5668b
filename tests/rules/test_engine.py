"""The engine: crashes become findings, select/ignore, conclusions, groups, untrusted runs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path

import pytest

from rules import evaluate
from rules.base import Rule
from rules.config import KernelGroup, RulesConfig
from rules.context import RuleContext
from rules.engine import conclude
from rules.gated import GateDecisions
from rules.groups import GroupFigures, group_figures
from rules.registry import SelectedRule, is_ignored, is_selected, selected_rules
from rules.testing import RuleCase, load_cases
from rules.verdict import Conclusion, Finding, KernelStatus, Severity, Stability, Verdict

CASES = Path(__file__).parent / "cases"


def case(rule: str, name: str) -> RuleCase:
    return next(c for c in load_cases(str(CASES / f"{rule}.yml")) if c.name == name)


def with_config(ctx: RuleContext, **changes: object) -> RuleContext:
    return replace(ctx, config=ctx.config.model_copy(update=changes))


def finding(severity: Severity, stability: Stability = Stability.STABLE) -> Finding:
    return Finding(rule="x", kernel="k", severity=severity, stability=stability, message="m")


@pytest.mark.parametrize(
    ("severities", "fail_on", "expected"),
    [
        ([], "fail", Conclusion.PASS),
        ([Severity.INFO], "fail", Conclusion.PASS),
        ([Severity.WARN], "fail", Conclusion.WARN),
        ([Severity.WARN], "warn", Conclusion.FAIL),
        ([Severity.FAIL, Severity.WARN], "fail", Conclusion.FAIL),
        ([Severity.FAIL], "never", Conclusion.WARN),
    ],
)
def test_conclusion_follows_the_failure_policy(
    severities: list[Severity], fail_on: str, expected: Conclusion
) -> None:
    assert conclude([finding(s) for s in severities], fail_on) == expected  # type: ignore[arg-type]


def test_preview_findings_never_change_the_conclusion() -> None:
    assert conclude([finding(Severity.FAIL, Stability.PREVIEW)], "fail") == Conclusion.PASS


def test_fused_gemv_drop_fails_the_run_with_full_verdict() -> None:
    verdict = evaluate(case("roof-drop", "fail_gemv_fusion_lost").context()).verdict
    assert verdict.conclusion == Conclusion.FAIL
    (kernel,) = verdict.kernels
    assert kernel.status == KernelStatus.REGRESSED and kernel.time_share == 1.0
    assert kernel.baseline is not None and kernel.baseline.n == 10
    assert kernel.baseline.center == pytest.approx(100 * 0.01 / 0.0118, rel=1e-3)
    assert kernel.baseline.relative_change == pytest.approx(0.0118 / 0.0140 - 1, rel=1e-3)
    assert len(kernel.baseline.history) == 10 and kernel.baseline.commits[0] == "0000000"
    f = verdict.findings[0]
    assert (f.rule, f.kernel, f.device, f.roof) == ("roof-drop", "gemv", "tiny", "tiny (datasheet)")
    assert f.advice is not None and f.advice_text
    assert f.gate is not None and f.gate.n == 10
    assert f.numbers["intensity_dram"] == pytest.approx(0.1)


class Crashing(Rule, abstract=True):
    """Crashes.

    **Anti-pattern**

    x

    **Best practice**

    y
    """

    id = "crashing"
    group = "test"
    default_severity = Severity.FAIL
    stability = Stability.STABLE

    def check(self, ctx: RuleContext, opts: object, gate: GateDecisions) -> Iterator[Finding]:
        raise ZeroDivisionError("bad maths")


def evaluate_with(monkeypatch: pytest.MonkeyPatch, rule: type[Crashing]) -> Verdict:
    """A passing case evaluated with ``rule`` selected beside the configured rules."""
    ctx = case("roof-drop", "pass_too_few_baseline_runs").context()
    real = selected_rules(ctx.config)
    crash = SelectedRule(rule, rule.Options())
    monkeypatch.setattr("rules.engine.selected_rules", lambda config: [*real, crash])
    return evaluate(ctx).verdict


def test_a_crashing_fail_rule_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    verdict = evaluate_with(monkeypatch, Crashing)
    (failure,) = [f for f in verdict.findings if f.rule == "crashing"]
    assert failure.severity == Severity.FAIL and "ZeroDivisionError" in failure.message
    assert verdict.conclusion == Conclusion.FAIL  # an unjudged gate must not pass


def test_a_crashing_warn_rule_stays_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    class CrashingAdvice(Crashing, abstract=True):
        id = "crashing-advice"
        default_severity = Severity.WARN

    verdict = evaluate_with(monkeypatch, CrashingAdvice)
    (failure,) = [f for f in verdict.findings if f.rule == "crashing-advice"]
    assert failure.severity == Severity.WARN and verdict.conclusion == Conclusion.WARN


def test_ignore_by_kernel_glob_and_more_specific_select() -> None:
    ctx = case("roof-drop", "fail_gemv_fusion_lost").context()
    ignore = [{"rule": "roofline", "kernels": "gem*"}]
    ignored = with_config(ctx, ignore=RulesConfig(ignore=ignore).ignore)  # type: ignore[arg-type]
    assert [f.rule for f in evaluate(ignored).verdict.findings] == []
    chosen = with_config(ignored, select=("roof-drop",))
    assert [f.rule for f in evaluate(chosen).verdict.findings] == ["roof-drop"]


def test_select_and_blanket_ignore_decisions() -> None:
    from rules.catalog.intensity_shift import IntensityShift
    from rules.catalog.roof_drop import RoofDrop

    config = RulesConfig(select=("roofline",), ignore=[{"rule": "intensity-shift"}])  # type: ignore[list-item]
    assert is_selected(RoofDrop, config) and not is_selected(IntensityShift, config)
    explicit = RulesConfig(select=("intensity-shift",), ignore=[{"rule": "roofline"}])  # type: ignore[list-item]
    assert is_selected(IntensityShift, explicit)
    assert not is_ignored(IntensityShift, "gemv", None, explicit)
    assert not is_selected(RoofDrop, RulesConfig(select=("time",)))


def test_untrusted_runner_gives_no_regression_verdict() -> None:
    ctx = case("roof-drop", "fail_gemv_fusion_lost").context()
    untrusted = replace(ctx, trusted=False)
    verdict = evaluate(untrusted).verdict
    assert verdict.conclusion == Conclusion.PASS and not verdict.trusted
    assert all(f.rule != "roof-drop" for f in verdict.findings)
    assert any("health preflight" in note for note in verdict.notes)


def test_groups_get_time_weighted_percent_and_mfu() -> None:
    verdict = evaluate(
        case("roof-drop", "fail_decode_group_time_rise_when_a_fusion_broke").context()
    ).verdict
    (group,) = verdict.groups
    assert group.name == "decode" and len(group.kernels) == 3
    # sum T_roof / sum T = (10 + 2 + 2) ms / 16.8 ms; MFU = (1.11e8 / 1e12) / 16.8 ms.
    assert group.percent_of_roof == pytest.approx(100 * 0.014 / 0.0168, rel=1e-6)
    assert group.mfu == pytest.approx(1.11e8 / 1e12 / 0.0168, rel=1e-6)
    # Six nights fused, then one night (and tonight's) with the fusion broken.
    assert group.baseline is not None and group.baseline.n == 7
    assert group.mfu_baseline is not None
    assert group.mfu_baseline.center == pytest.approx(1.1e8 / 1e12 / 0.0143, rel=0.01)
    assert {k.key: k.group for k in verdict.kernels}["decode_add"] == "decode"


def test_group_figures_are_computed_once_per_context_and_shared(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # roof-drop (its gate batches and its findings) and the engine's rows read the groups:
    # one computation, kept by the context.
    ctx = case("roof-drop", "fail_decode_group_time_rise_when_a_fusion_broke").context()
    calls: list[object] = []

    def counting(c: RuleContext) -> Mapping[str, GroupFigures]:
        calls.append(c)
        return group_figures(c)

    monkeypatch.setattr("rules.context.group_figures", counting)
    verdict = evaluate(ctx).verdict
    assert calls == [ctx] and set(ctx.groups) == {"decode"}
    assert [g.name for g in verdict.groups] == ["decode"]
    assert any(f.kernel == "group:decode" for f in verdict.findings)


def test_missing_kernels_are_entries_with_their_baseline() -> None:
    verdict = evaluate(case("missing-kernel", "fail_fused_kernel_vanished").context()).verdict
    (missing,) = [k for k in verdict.kernels if k.status == KernelStatus.MISSING]
    assert missing.key == "fused_add_rmsnorm" and missing.time_s == 0.0
    assert missing.percent_of_roof is None and missing.measurements == ()
    assert missing.baseline is not None and missing.baseline.n > 0
    assert missing.baseline.time_s == pytest.approx(0.0025)
    assert missing.baseline.center is not None
    run_keys = {k.key for k in verdict.kernels} - {missing.key}
    assert run_keys and all(
        k.status != KernelStatus.MISSING for k in verdict.kernels if k.key in run_keys
    )


def test_missing_history_columns_are_named() -> None:
    ctx = case("roof-drop", "fail_gemv_fusion_lost").context()
    from rules.errors import RuleError

    with pytest.raises(RuleError, match="lacks columns"):
        RuleContext(run=ctx.run, roof=ctx.roof, history=ctx.history.drop(columns=["regime"]))


def test_the_table_baseline_is_the_segment_the_gate_judged_against() -> None:
    """A kernel that rose 20% six nights ago and is back at its old level on a PR is a
    roof-drop suspect against the new level; its baseline says the same, not a median of
    both levels that shows no change."""
    old, new = [0.0118, 0.0119, 0.0117, 0.0118, 0.0120], [0.00983, 0.00985, 0.00981]
    times = old * 4 + new * 2  # 20 nights at the old level, then 6 at the new one
    spec = {
        "config": {"groups": [{"name": "rising", "pattern": "gemv"}]},
        "baseline": {
            "kernels": [
                {"key": "gemv", "flops": {"fp32": 1e8}, "bytes": {"dram": 1e9}, "times": times},
                {"key": "flat", "flops": {"fp32": 1e8}, "bytes": {"dram": 1e9}, "times": old},
            ]
        },
        "current": {
            "kernels": [
                {"key": "gemv", "flops": {"fp32": 1e8}, "bytes": {"dram": 1e9}, "time_s": 0.0118},
                {"key": "flat", "flops": {"fp32": 1e8}, "bytes": {"dram": 1e9}, "time_s": 0.0118},
            ],
        },
    }
    tiny = case("roof-drop", "fail_gemv_fusion_lost").device
    verdict = evaluate(
        RuleCase("roof-drop", "fail_rise_then_back", "test", spec, tiny).context()
    ).verdict
    kernels = {k.key: k for k in verdict.kernels}
    gate = next(f.gate for f in verdict.findings if f.kernel == "gemv")
    base = kernels["gemv"].baseline
    assert kernels["gemv"].status == KernelStatus.SUSPECT and base is not None and gate is not None
    assert base.n == 6 == gate.n
    assert base.center == pytest.approx(100 * 0.01 / 0.00983, rel=1e-3)
    assert base.relative_change == pytest.approx(gate.relative_change, rel=0.01)
    assert base.used == (20, 26) and len(base.history) == 26  # the sparkline shows all
    assert base.commits == ("0000014", "0000019")  # nights 20 and 25: the new level
    assert kernels["gemv"].time_ratio == pytest.approx(0.0118 / 0.00983, rel=1e-3)
    flat = kernels["flat"].baseline
    assert kernels["flat"].status == KernelStatus.UNCHANGED and flat is not None
    assert flat.n == 26 and flat.used is None
    (group,) = verdict.groups  # judged by the same gate: the same runs
    assert group.baseline is not None and group.baseline.n == 6
    assert group.time_ratio == pytest.approx(0.0118 / 0.00983, rel=1e-3)


def test_a_group_no_kernel_joins_is_noted_with_a_case_hint() -> None:
    """``*S884GEMM*`` for ``s884gemm``: a group of 0 kernels, its regime never checked, silently."""
    groups = (
        KernelGroup(name="gemm", pattern="*GEMV*", regime="memory-bound"),
        KernelGroup(name="attention", pattern="flash_*"),
        KernelGroup(name="decode", pattern="gemv*"),
    )
    ctx = with_config(case("roof-drop", "fail_gemv_fusion_lost").context(), groups=groups)
    notes = [n for n in evaluate(ctx).verdict.notes if n.startswith("group ")]
    assert notes == [
        "group 'gemm' matches no kernel of this run (pattern '*GEMV*', a case-sensitive glob "
        "on each kernel's key and name; 1 would, ignoring case)",
        "group 'attention' matches no kernel of this run (pattern 'flash_*', a case-sensitive "
        "glob on each kernel's key and name)",
    ]


KEYS = ("gemv", "flat")


def test_a_group_whose_kernels_earlier_groups_took_names_them_not_a_case_typo() -> None:
    """Earlier groups took what ``late`` matches: no case hint, and the groups named with counts.

    Kernels it would match ignoring case count for the hint only where no earlier group holds them.
    """
    work = {"flops": {"fp32": 1e8}, "bytes": {"dram": 1e9}}
    spec = {
        "config": {
            "groups": [
                {"name": "gemv", "pattern": "gemv"},
                {"name": "flat", "pattern": "flat"},
                {"name": "late", "pattern": "[fg]*"},
                {"name": "typo", "pattern": "GEMV"},
            ]
        },
        "baseline": {"kernels": [{"key": k, **work, "times": [0.0118] * 3} for k in KEYS]},
        "current": {"kernels": [{"key": k, **work, "time_s": 0.0118} for k in KEYS]},
    }
    tiny = case("roof-drop", "fail_gemv_fusion_lost").device
    ctx = RuleCase("roof-drop", "pass_shadowed_groups", "test", spec, tiny).context()
    notes = [n for n in evaluate(ctx).verdict.notes if n.startswith("group ")]
    assert notes == [
        "group 'late' has no kernel of this run: the 2 kernels its pattern '[fg]*' matches "
        "joined the earlier groups 'gemv' (1) and 'flat' (1) (a kernel joins only the first "
        "group it matches; list 'late' above them to judge them on their own)",
        "group 'typo' matches no kernel of this run (pattern 'GEMV', a case-sensitive glob "
        "on each kernel's key and name)",
    ]
