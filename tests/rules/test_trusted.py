"""The rows a check makes without validating them (``rules.trusted``) are the validated ones."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

import rules.engine
import rules.kernelbaselines
from rules import evaluate
from rules.testing import RuleCase, load_cases
from rules.trusted import trusted
from rules.verdict import BaselineSummary, KernelVerdict, RunBaseline

CASES = load_cases(str(Path(__file__).parent / "cases" / "*.yml"))


def typed(value: Any) -> Any:
    """``value`` with the exact type of every part of it (NaN equal to NaN)."""
    if isinstance(value, BaseModel):
        fields = tuple((k, typed(v)) for k, v in value.__dict__.items())
        return type(value), fields, frozenset(value.__pydantic_fields_set__)
    if isinstance(value, tuple | list):
        return type(value), tuple(typed(v) for v in value)
    if isinstance(value, dict):
        return type(value), tuple((typed(k), typed(v)) for k, v in value.items())
    return type(value), repr(value)


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[BaseModel]:
    """Every row made by ``trusted`` in the test, each checked against validation."""
    rows: list[BaseModel] = []

    def checked(model: type[BaseModel], fields: Mapping[str, Any]) -> BaseModel:
        row = trusted(model, fields)
        assert typed(row) == typed(model(**fields))
        rows.append(row)
        return row

    monkeypatch.setattr(rules.engine, "trusted", checked)
    monkeypatch.setattr(rules.kernelbaselines, "trusted", checked)
    return rows


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_every_trusted_row_of_a_rule_case_is_the_validated_row(
    case: RuleCase, made: list[BaseModel]
) -> None:
    verdict = evaluate(case.context()).verdict
    assert verdict.model_dump_json()  # serialises as a validated verdict does


def test_the_rule_cases_make_trusted_rows_of_both_kinds(made: list[BaseModel]) -> None:
    for case in CASES:
        evaluate(case.context())
    assert {type(row) for row in made} == {KernelVerdict, BaselineSummary}


def test_a_model_with_a_validator_is_validated() -> None:
    baseline = trusted(RunBaseline, {"n": 3, "runs": 3})
    assert baseline == RunBaseline(n=3, runs=3)


def test_a_row_without_a_field_made_by_a_factory_or_a_required_one_is_validated() -> None:
    fields = {"key": "k", "name": "k", "time_s": 1.0, "time_share": 1.0, "percent_of_roof": None}
    row = trusted(KernelVerdict, {**fields, "regime": None, "binding": None})
    assert row == KernelVerdict(**fields, regime=None, binding=None)
    with pytest.raises(ValidationError):
        trusted(KernelVerdict, {**fields, "regime": None, "intensity": {}})


def rows_three_ways(case: RuleCase) -> tuple[list[KernelVerdict], ...]:
    """A case's rows made together, one by one from the same summaries, and each alone."""
    ctx = case.context()
    selected = rules.engine.runnable_rules(ctx)
    gate, crashed = rules.engine.gate_pass(ctx, selected, None)
    findings = rules.engine._findings(ctx, selected, gate, crashed)
    summarised = rules.kernelbaselines.kernel_baselines(ctx, gate)
    of_kernel = rules.engine.findings_by_kernel(findings)

    def one_by_one(given: Mapping[str, BaselineSummary] | None) -> list[KernelVerdict]:
        return [
            rules.engine.kernel_verdict(ctx, key, of_kernel.get(key, ()), gate, given)
            for key in ctx.kernels
        ]

    together = rules.engine.kernel_verdicts(ctx, findings, gate, summarised)
    return together, one_by_one(summarised), one_by_one(None)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_rows_made_together_are_the_rows_made_one_by_one(case: RuleCase) -> None:
    """... and the rows of kernels summarised each on its own (new ones: ``NO_BASELINE``)."""
    together, one_by_one, each_alone = rows_three_ways(case)
    assert [typed(row) for row in together] == [typed(row) for row in one_by_one]
    assert [row.model_dump() for row in together] == [row.model_dump() for row in each_alone]


def test_the_rule_cases_hold_new_kernels_summarised_together() -> None:
    new = 0
    for case in CASES:
        ctx = case.context()
        gate, _ = rules.engine.gate_pass(ctx, rules.engine.runnable_rules(ctx), None)
        summarised = rules.kernelbaselines.kernel_baselines(ctx, gate).values()
        new += sum(s is rules.kernelbaselines.NO_BASELINE for s in summarised)
    assert new >= 5
