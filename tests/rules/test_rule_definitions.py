"""Every rule is defined as the conventions require and has its case file."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from rules.base import Rule, RuleOptions
from rules.errors import RuleDefinitionError
from rules.registry import all_rules, load_rules
from rules.testing import load_cases
from rules.verdict import Severity, Stability

CASES = Path(__file__).parent / "cases"
RULES = sorted(all_rules().items())
EXPECTED_IDS = {
    "roof-drop",
    "regime-mislabel",
    "regime-flip",
    "above-roof",
    "intensity-shift",
    "peak-sanity",
    "time-regression",
    "new-kernel",
    "missing-kernel",
    "lost-counters",
    "work-change",
    "env-mismatch",
    "device-scaling",
    "early-slowdown",
}


def test_catalogue_is_complete() -> None:
    assert set(all_rules()) == EXPECTED_IDS


@pytest.mark.parametrize(("rule_id", "rule"), RULES, ids=[r for r, _ in RULES])
def test_rule_metadata(rule_id: str, rule: type[Rule]) -> None:
    doc = rule.__doc__ or ""
    assert doc.index("**Anti-pattern**") < doc.index("**Best practice**")
    assert rule.summary and rule.summary == doc.strip().splitlines()[0]
    assert rule.__module__ == f"rules.catalog.{rule_id.replace('-', '_')}"
    assert isinstance(rule.default_severity, Severity)
    assert isinstance(rule.stability, Stability)
    assert issubclass(rule.Options, RuleOptions)
    rule.Options()  # defaults are valid


@pytest.mark.parametrize(("rule_id", "rule"), RULES, ids=[r for r, _ in RULES])
def test_rule_has_pass_and_fail_cases(rule_id: str, rule: type[Rule]) -> None:
    path = CASES / f"{rule_id}.yml"
    assert path.exists(), f"missing case file {path}"
    names = [c.name for c in load_cases(str(path))]
    assert all(c.rule == rule_id for c in load_cases(str(path)))
    assert any(n.startswith("pass_") for n in names), f"{path}: no pass_ case"
    assert any(n.startswith("fail_") for n in names), f"{path}: no fail_ case"


def test_bad_id_is_rejected() -> None:
    with pytest.raises(RuleDefinitionError, match="kebab-case"):

        class Bad(Rule):
            """Bad.

            **Anti-pattern**

            x

            **Best practice**

            y
            """

            id = "Bad_Rule"
            group = "x"
            default_severity = Severity.INFO


def test_id_must_match_module() -> None:
    with pytest.raises(RuleDefinitionError, match="module name"):

        class Other(Rule):
            """Other.

            **Anti-pattern**

            x

            **Best practice**

            y
            """

            id = "other-rule"
            group = "x"
            default_severity = Severity.INFO


def test_sections_out_of_order_are_rejected() -> None:
    with pytest.raises(RuleDefinitionError, match="sections"):

        class TestRuleDefinitions(Rule):
            """Swapped.

            **Best practice**

            y

            **Anti-pattern**

            x
            """

            id = "test-rule-definitions"
            group = "x"
            default_severity = Severity.INFO


PLUGIN = '''
from rules.base import Rule
from rules.verdict import Severity


class RoofDrop(Rule):
    """A plugin that reuses a built-in id.

    **Anti-pattern**

    x

    **Best practice**

    y
    """

    id = "roof-drop"
    group = "plugin"
    default_severity = Severity.INFO
'''


def test_duplicate_ids_are_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = "rules.catalog.roof_drop:RoofDrop"
    assert list(load_rules([spec, spec])) == ["roof-drop"]  # the same class twice is fine
    module = types.ModuleType("fakepack.roof_drop")
    exec(compile(PLUGIN, "fakepack/roof_drop.py", "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, "fakepack.roof_drop", module)
    with pytest.raises(RuleDefinitionError, match="duplicate rule id 'roof-drop'"):
        load_rules([spec, "fakepack.roof_drop:RoofDrop"])


def test_load_failure_is_named() -> None:
    with pytest.raises(
        RuleDefinitionError, match=r"cannot load rule 'rules\.catalog\.roof_drop:Nope'"
    ):
        load_rules(["rules.catalog.roof_drop:Nope"])
