"""What a verdict concludes: severities, conclusions and kernel statuses (``rules.verdict``)."""

from __future__ import annotations

from enum import StrEnum


class Severity(StrEnum):
    """How much a finding matters: ``fail`` fails the check, ``warn`` and ``info`` do not."""

    FAIL = "fail"
    WARN = "warn"
    INFO = "info"

    @property
    def rank(self) -> int:
        """Sort key, worst first."""
        return {"fail": 0, "warn": 1, "info": 2}[self.value]


class Stability(StrEnum):
    """Preview rules are reported but never affect the conclusion."""

    STABLE = "stable"
    PREVIEW = "preview"


class Conclusion(StrEnum):
    """The run's conclusion."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"


#: A run that judged nothing (no baseline, or too short) and failed nothing: neutral, not "pass".
NOT_JUDGED = "not judged"


def shown_conclusion(conclusion: Conclusion, judged_nothing: bool) -> str:
    """The conclusion a reader is shown (the JSON keeps the conclusion itself)."""
    return NOT_JUDGED if judged_nothing and conclusion != Conclusion.FAIL else conclusion.value


class KernelStatus(StrEnum):
    """What the verdict says of one kernel (``KernelVerdict.status``), strongest first.

    ``regressed`` and ``suspect`` come from findings (a rule's ``statuses``), ``missing`` from
    missing-kernel's, ``accepted`` from ``/roofguard accept``; the engine sets the others.
    """

    REGRESSED = "regressed"
    SUSPECT = "suspect"
    IMPROVED = "improved"
    UNCHANGED = "unchanged"
    NEW = "new"
    ACCEPTED = "accepted"
    UNPLACED = "unplaced"
    MISSING = "missing"

    @classmethod
    def parse(cls, value: object) -> KernelStatus | None:
        """``value`` as a status (None when it is not one of them)."""
        return next((s for s in cls if s.value == value), None) if isinstance(value, str) else None
