"""Errors raised by the rules package."""

from __future__ import annotations


class RuleError(Exception):
    """Base class of every rules error."""


class RuleDefinitionError(RuleError):
    """A rule class is not defined as the conventions require (id, docstring sections ...)."""


class UnknownRule(RuleError):
    """A rule id or group that no registered rule has."""


class RuleExecutionFailed(RuleError):
    """A rule crashed on a kernel; the engine wraps the cause so the run still gets a verdict."""

    def __init__(self, rule_id: str, kernel: str | None, cause: BaseException) -> None:
        self.rule_id = rule_id
        self.kernel = kernel
        self.cause = cause
        super().__init__(f"rule {rule_id} failed on kernel {kernel!r}: {cause!r}")
