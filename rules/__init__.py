"""Rules: roofline placement, findings and verdicts. Pure domain logic, no I/O.

Public API: ``evaluate(ctx) -> Evaluation`` (the ``Verdict``, and the gate's levels for the
caller to store) with a ``RuleContext`` and a ``RulesConfig``; ``all_rules()`` lists the
registered rules. A rule's ``check`` receives the gate's ``GateDecisions``;
``gate_batches`` asks for them with ``GateBatch``es.
"""

from rules.config import IgnoreEntry, KernelGroup, RulesConfig
from rules.context import RuleContext
from rules.engine import Evaluation, evaluate
from rules.figures import GateFigures
from rules.gated import GateDecision, GateDecisions
from rules.judging import GateBatch
from rules.registry import all_rules, get_rule
from rules.verdict import (
    BaselineSummary,
    Conclusion,
    Finding,
    GroupVerdict,
    KernelStatus,
    KernelVerdict,
    Severity,
    Stability,
    Verdict,
)

__all__ = [
    "BaselineSummary",
    "Conclusion",
    "Evaluation",
    "Finding",
    "GateBatch",
    "GateDecision",
    "GateDecisions",
    "GateFigures",
    "GroupVerdict",
    "IgnoreEntry",
    "KernelGroup",
    "KernelStatus",
    "KernelVerdict",
    "RuleContext",
    "RulesConfig",
    "Severity",
    "Stability",
    "Verdict",
    "all_rules",
    "evaluate",
    "get_rule",
]
