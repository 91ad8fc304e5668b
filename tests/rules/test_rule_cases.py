"""Every YAML rule case (tests/rules/cases/<rule-id>.yml) run through the real engine."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from rules import evaluate
from rules.config import RulesConfig
from rules.testing import RuleCase, load_cases

CASES = Path(__file__).parent / "cases"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "rule_case" in metafunc.fixturenames:
        cases = load_cases(str(CASES / "*.yml"))
        metafunc.parametrize("rule_case", cases, ids=[c.id for c in cases])


def found(case: RuleCase) -> set[tuple[str, str | None, str]]:
    ctx = case.context()
    # Only the rule under test runs, as the case's config would select it, with the rules the
    # case runs alongside it (whose findings are not the case's); every other field of the
    # context is the case's.
    select = (case.rule, *case.alongside)
    only = replace(ctx, config=ctx.config.model_copy(update={"select": select}))
    verdict = evaluate(only).verdict
    return {(f.rule, f.kernel, f.severity.value) for f in verdict.findings if f.rule == case.rule}


def test_rule_case(rule_case: RuleCase) -> None:
    actual = found(rule_case)
    expected = rule_case.expected
    assert actual == expected, f"{rule_case.source}: {rule_case.name}"
    if rule_case.name.startswith("fail_"):
        assert expected, f"{rule_case.source}: fail case {rule_case.name} expects no finding"


def test_case_names_are_unique_per_rule() -> None:
    cases = load_cases(str(CASES / "*.yml"))
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids))
    assert isinstance(RulesConfig(), RulesConfig)
