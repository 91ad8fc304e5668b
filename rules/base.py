"""The ``Rule`` base class: a rule describes itself and is checked when it is defined.

A rule module holds one ``Rule`` subclass with ``id`` (kebab-case, equal to the module name
with ``-`` for ``_``), ``group``, ``default_severity``, ``stability``, a nested ``Options``
model, and a docstring whose first line is the summary, followed by an ``**Anti-pattern**``
section (what triggers it) and a ``**Best practice**`` section (the advice it gives).

A rule is run in two steps. ``gate_batches`` says what the gate should judge for it (only
the baseline rules ask anything); the engine judges every rule's batches before any rule
checks. ``check`` then receives the context, the rule's options and the gate's decisions
(``GateDecisions``), and yields findings.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from rules.advice import ADVICE_TEXT, Advice, advice_for
from rules.context import RuleContext
from rules.errors import RuleDefinitionError
from rules.gated import GateDecisions
from rules.judging import GateBatch
from rules.roofline import Placement
from rules.verdict import Finding, KernelStatus, Severity, Stability

RULE_ID = re.compile(r"^[a-z]+(-[a-z]+)*$")
SECTIONS = ("**Anti-pattern**", "**Best practice**")


class RuleOptions(BaseModel):
    """Base of every rule's ``Options``: frozen, unknown keys rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def _check_docstring(cls: type) -> str:
    doc = inspect.cleandoc(cls.__doc__ or "")
    if not doc.strip():
        raise RuleDefinitionError(f"{cls.__qualname__}: a rule needs a docstring")
    positions = [doc.find(section) for section in SECTIONS]
    if any(p < 0 for p in positions) or positions != sorted(positions):
        raise RuleDefinitionError(
            f"{cls.__qualname__}: docstring needs {SECTIONS[0]} then {SECTIONS[1]} sections"
        )
    return doc.splitlines()[0].strip()


def _check_id(cls: type, rule_id: object) -> None:
    if not isinstance(rule_id, str) or not RULE_ID.match(rule_id):
        raise RuleDefinitionError(f"{cls.__qualname__}: id {rule_id!r} is not kebab-case")
    module = cls.__module__.rsplit(".", 1)[-1]
    if module != rule_id.replace("-", "_") and cls.__module__ != "__main__":
        raise RuleDefinitionError(
            f"{cls.__qualname__}: id {rule_id!r} must match its module name {module!r}"
        )


class Rule:
    """Base of every rule. Subclasses define the metadata below and ``check``."""

    id: ClassVar[str]
    group: ClassVar[str]
    summary: ClassVar[str]
    default_severity: ClassVar[Severity]
    stability: ClassVar[Stability] = Stability.PREVIEW
    #: Whether the rule judges against the baseline (skipped on an untrusted runner).
    compares_to_baseline: ClassVar[bool] = False
    #: Kernel statuses the rule's fail/warn findings set (``regressed``, ``suspect``); the
    #: engine reads a finding's status from it, so no list of rules is kept elsewhere. With
    #: one status, every fail/warn finding sets it; with several, ``finding(status=...)``
    #: names which.
    statuses: ClassVar[frozenset[KernelStatus]] = frozenset()
    Options: ClassVar[type[RuleOptions]] = RuleOptions

    def __init_subclass__(cls, abstract: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if abstract:
            return
        _check_id(cls, getattr(cls, "id", None))
        for attr in ("group", "default_severity"):
            if not hasattr(cls, attr):
                raise RuleDefinitionError(f"{cls.__qualname__}: missing class attribute {attr}")
        if not (isinstance(cls.Options, type) and issubclass(cls.Options, RuleOptions)):
            raise RuleDefinitionError(f"{cls.__qualname__}: Options must subclass RuleOptions")
        cls.summary = _check_docstring(cls)

    def gate_batches(self, ctx: RuleContext, opts: Any) -> Iterator[GateBatch]:
        """What the gate judges for this rule, before any rule checks (default: nothing).

        One batch per metric of every kernel (a group on its own): the decisions are filed by
        metric, and a metric is judged for one rule only.
        """
        return iter(())

    def check(self, ctx: RuleContext, opts: Any, gate: GateDecisions) -> Iterator[Finding]:
        """Yield findings for ``ctx`` with validated options ``opts`` and the gate's decisions."""
        raise NotImplementedError

    def finding(
        self,
        ctx: RuleContext,
        key: str | None,
        message: str,
        *,
        severity: Severity | None = None,
        advice: Advice | None = None,
        numbers: Mapping[str, float | str | None] | None = None,
        status: KernelStatus | None = None,
    ) -> Finding:
        """A finding with the kernel's device, roof, binding, advice and status filled in."""
        placement = ctx.placements.get(key) if key else None
        kernel = ctx.kernels.get(key) if key else None
        if advice is None and placement is not None:
            like = ctx.like_for_like.get(key) if key else None
            advice = advice_for(placement, ctx.config.near_roof_percent, like)
        return Finding(
            rule=self.id,
            kernel=key,
            kernel_name=kernel.name if kernel else key,
            device=ctx.roof.device,
            roof=ctx.roof.label,
            severity=severity or self.default_severity,
            stability=self.stability,
            message=message,
            advice=advice,
            advice_text=ADVICE_TEXT[advice] if advice else None,
            binding=placement.binding if placement else None,
            numbers={**placement_numbers(placement), **(numbers or {}), **self._status(status)},
        )

    def _status(self, status: KernelStatus | None) -> dict[str, str]:
        if status is None and len(self.statuses) == 1:
            status = next(iter(self.statuses))
        if status is None:
            return {}
        if status not in self.statuses:
            known = sorted(str(s) for s in self.statuses)
            raise RuleDefinitionError(f"{self.id}: status {str(status)!r} not in {known}")
        return {"status": KernelStatus(status).value}


def placement_numbers(placement: Placement | None) -> dict[str, float | str | None]:
    """The placement figures every finding carries (intensity, binding, times)."""
    if placement is None:
        return {}
    numbers: dict[str, float | str | None] = {
        "percent_of_roof": placement.percent_of_roof,
        "regime": placement.regime,
        "binding": placement.binding,
        "time_s": placement.time_s,
        "t_roof_s": placement.t_roof_s,
        "t_compute_s": placement.compute.time_s,
        "t_memory_s": placement.memory.time_s,
    }
    for tier, value in placement.intensity.items():
        numbers[f"intensity_{tier}"] = value
    return numbers
