"""How a verdict becomes a check conclusion, and which GitHub signal carries it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from rules import Conclusion, Verdict


class FailurePolicy(StrEnum):
    """When the check (and the job) fails.

    ``on-regression`` (default): a failing verdict fails; warnings are neutral.
    ``on-warning``: warnings fail too. ``never``: report only, every verdict is neutral or
    success.
    """

    ON_REGRESSION = "on-regression"
    ON_WARNING = "on-warning"
    NEVER = "never"


class CheckKind(StrEnum):
    """Which pass/fail signal to post: ``auto`` tries a check run, then a commit status."""

    AUTO = "auto"
    CHECK_RUN = "check-run"
    STATUS = "status"
    NONE = "none"


@dataclass(frozen=True)
class PublishPolicy:
    """Failure policy, check kind and the check's name.

    Attributes:
        failure: When the conclusion is ``failure``.
        check: Check run, commit status, either (auto) or none.
        name: Check-run name / status context; the device is appended, so each device of a
            multi-GPU matrix has its own required check.
    """

    failure: FailurePolicy = FailurePolicy.ON_REGRESSION
    check: CheckKind = CheckKind.AUTO
    name: str = "roofguard"

    def check_name(self, device: str | None) -> str:
        """``roofguard (H100-SXM5)``, or just the name without a device."""
        return f"{self.name} ({device})" if device else self.name


def check_conclusion(verdict: Verdict, failure: FailurePolicy) -> str:
    """The check-run conclusion: ``success``, ``neutral`` or ``failure``.

    A run whose runner failed its health preflight (``trusted`` False) is neutral: it says
    nothing about regressions either way. So is a run judged against no baseline (no stored
    run yet, or a store that does not persist between jobs) that nothing failed: a green
    check there would be a silent pass.
    """
    if not verdict.trusted:
        return "neutral"
    if verdict.not_judged:
        return "neutral"
    if verdict.conclusion == Conclusion.PASS:
        return "success"
    if failure == FailurePolicy.NEVER:
        return "neutral"
    if verdict.conclusion == Conclusion.FAIL or failure == FailurePolicy.ON_WARNING:
        return "failure"
    return "neutral"


def status_state(conclusion: str) -> str:
    """Commit statuses know no ``neutral``: it passes, as it does for a required check run."""
    return "failure" if conclusion == "failure" else "success"


def should_fail(verdict: Verdict, failure: FailurePolicy) -> bool:
    """Whether the job should fail for this verdict under ``failure``."""
    return check_conclusion(verdict, failure) == "failure"
