"""The gate's pass: judged once before any rule checks, the same decisions for every rule."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rules import evaluate
from rules.base import Rule
from rules.context import RuleContext
from rules.gated import GateDecisions
from rules.judging import GateBatch, Measured
from rules.registry import SelectedRule, selected_rules
from rules.stats import CompareOptions
from rules.testing import RuleCase, load_cases
from rules.verdict import Conclusion, Finding, Severity, Stability, Verdict

CASES = Path(__file__).parent / "cases"


def case(rule: str, name: str) -> RuleCase:
    return next(c for c in load_cases(str(CASES / f"{rule}.yml")) if c.name == name)


class GateReader(Rule, abstract=True):
    """A rule of these tests.

    **Anti-pattern**

    x

    **Best practice**

    y
    """

    id = "gate-reader"
    group = "test"
    default_severity = Severity.WARN
    stability = Stability.STABLE

    def check(self, ctx: RuleContext, opts: object, gate: GateDecisions) -> Iterator[Finding]:
        """A finding per kernel the gate decided regressed on percent of roof (roof-drop's)."""
        for key, decision in gate.of("percent_of_roof").items():
            if decision.judgement.regressed:
                yield self.finding(ctx, key, f"{key}: regressed, says the gate")


def evaluate_with(
    monkeypatch: pytest.MonkeyPatch, ctx: RuleContext, first: type[Rule] | None = None
) -> Verdict:
    """``ctx`` evaluated with ``first`` selected before the configured rules."""
    real = selected_rules(ctx.config)
    chosen = [SelectedRule(first, first.Options())] if first else []
    monkeypatch.setattr("rules.engine.selected_rules", lambda config: [*chosen, *real])
    return evaluate(ctx).verdict


def test_a_rule_that_runs_first_reads_what_the_gate_judged_for_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ctx = case("roof-drop", "fail_gemv_fusion_lost").context()
    verdict = evaluate_with(monkeypatch, ctx, GateReader)
    by_rule = {f.rule: f for f in verdict.findings}
    assert by_rule["gate-reader"].kernel == "gemv"  # selected before roof-drop
    assert by_rule["roof-drop"].severity == Severity.FAIL


def test_the_verdict_does_not_depend_on_the_order_the_rules_run_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ctx = case("roof-drop", "fail_decode_group_time_rise_when_a_fusion_broke").context()
    forward = evaluate(ctx).verdict
    reverse = list(reversed(selected_rules(ctx.config)))
    monkeypatch.setattr("rules.engine.selected_rules", lambda config: reverse)
    again = case("roof-drop", "fail_decode_group_time_rise_when_a_fusion_broke").context()
    assert evaluate(again).verdict == forward


class Rejudging(GateReader, abstract=True):
    id = "rejudging"

    def gate_batches(self, ctx: RuleContext, opts: object) -> Iterator[GateBatch]:
        """Percent of roof again, with other thresholds."""
        history = ctx.kernel_history("gemv").percent_of_roof
        yield GateBatch("percent_of_roof", {"gemv": Measured(history, 50.0)}, CompareOptions())

    def check(self, ctx: RuleContext, opts: object, gate: GateDecisions) -> Iterator[Finding]:
        raise AssertionError("a rule whose batches were refused does not check")


def test_a_metric_is_judged_for_one_rule_only(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = case("roof-drop", "fail_gemv_fusion_lost").context()
    real = selected_rules(ctx.config)
    late = SelectedRule(Rejudging, Rejudging.Options())
    monkeypatch.setattr("rules.engine.selected_rules", lambda config: [*real, late])
    verdict = evaluate(ctx).verdict
    (refused,) = [f for f in verdict.findings if f.rule == "rejudging"]
    assert "percent_of_roof is judged by the gate for roof-drop" in refused.message
    assert refused.severity == Severity.WARN  # the rule's own severity, as any crash
    gemv = next(f for f in verdict.findings if f.rule == "roof-drop")
    assert gemv.gate is not None and gemv.gate.current != 50.0  # roof-drop's own judgement


class CrashingBatches(GateReader, abstract=True):
    id = "crashing-batches"
    default_severity = Severity.FAIL

    def gate_batches(self, ctx: RuleContext, opts: object) -> Iterator[GateBatch]:
        """Crashes while it says what to judge."""
        raise ZeroDivisionError("bad maths")


def test_a_rule_whose_batches_crash_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = case("roof-drop", "pass_too_few_baseline_runs").context()
    verdict = evaluate_with(monkeypatch, ctx, CrashingBatches)
    (crash,) = [f for f in verdict.findings if f.rule == "crashing-batches"]
    assert "ZeroDivisionError" in crash.message and crash.kernel is None
    assert verdict.conclusion == Conclusion.FAIL
