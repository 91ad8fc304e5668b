"""Rules: roofline placement, findings and verdicts. Pure domain logic, no I/O.

Public API: ``evaluate(ctx) -> Verdict`` with a ``RuleContext`` and a ``RulesConfig``;
``all_rules()`` lists the registered rules.
"""

from rules.config import IgnoreEntry, KernelGroup, RulesConfig
from rules.context import RuleContext
from rules.engine import evaluate
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
    "Finding",
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
