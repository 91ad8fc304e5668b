"""Retries for GitHub calls: github3.py 4.0.1 has no retry, backoff or rate-limit handling.

Policy, following GitHub's REST guidance: on 5xx and connection errors back off
exponentially; on 403/429 rate limits wait ``Retry-After`` seconds, or until
``x-ratelimit-reset`` when ``x-ratelimit-remaining`` is 0, or a minute for a secondary limit
without headers; any other 4xx is not retried. The total time is bounded. The clock is
injectable so tests wait on a fake one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from github3 import exceptions as gh_exc

from service.errors import ServiceError

T = TypeVar("T")


class Clock(Protocol):
    """Wall-clock time (epoch seconds, as ``x-ratelimit-reset`` uses) and sleeping."""

    def now(self) -> float:
        """Seconds since the epoch."""

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``."""


class SystemClock:
    """The real clock."""

    def now(self) -> float:
        """``time.time()``."""
        return time.time()

    def sleep(self, seconds: float) -> None:
        """``time.sleep(seconds)``."""
        time.sleep(seconds)


@dataclass(frozen=True)
class RetryPolicy:
    """Bounds on retrying one GitHub operation.

    Attributes:
        max_attempts: Attempts in all, the first included.
        max_total_s: Give up rather than wait past this many seconds since the first attempt.
        base_delay_s: First backoff for 5xx and connection errors (doubles each time).
        max_delay_s: Cap on one backoff.
        secondary_wait_s: Wait for a rate limit that names no time (GitHub: at least a minute).
    """

    max_attempts: int = 5
    max_total_s: float = 300.0
    base_delay_s: float = 2.0
    max_delay_s: float = 60.0
    secondary_wait_s: float = 60.0


class GitHubFailed(ServiceError):
    """A GitHub request failed for a reason retrying cannot fix (auth, 404, 422...)."""

    status = 502


class GitHubUnavailable(GitHubFailed):
    """GitHub kept failing (5xx, rate limit, network) past the retry budget."""

    status = 503

    def __init__(self, what: str, attempts: int, cause: Exception) -> None:
        self.what = what
        self.attempts = attempts
        self.cause = cause
        super().__init__(f"GitHub: {what} failed after {attempts} attempt(s): {cause}")


def _header(exc: gh_exc.GitHubError, name: str) -> str | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    value = headers.get(name)
    return str(value) if value is not None else None


def _rate_limit_wait(exc: gh_exc.GitHubError, policy: RetryPolicy, now: float) -> float | None:
    retry_after = _header(exc, "retry-after")
    if retry_after is not None and retry_after.strip().isdigit():
        return float(retry_after)
    reset = _header(exc, "x-ratelimit-reset")
    if _header(exc, "x-ratelimit-remaining") == "0" and reset and reset.strip().isdigit():
        return max(float(reset) - now, 0.0) + 1.0
    if exc.code == 429 or "rate limit" in (exc.msg or "").lower():
        return policy.secondary_wait_s
    return None  # a plain 403 is a permission problem: retrying will not help


def retry_delay(exc: Exception, attempt: int, policy: RetryPolicy, now: float) -> float | None:
    """Seconds to wait before retrying after ``exc`` (attempt 1 = first), or None: give up."""
    backoff = float(min(policy.base_delay_s * 2.0 ** (attempt - 1), policy.max_delay_s))
    if isinstance(exc, gh_exc.TransportError | gh_exc.ServerError):
        return backoff
    if isinstance(exc, gh_exc.GitHubError) and exc.code in (403, 429):
        return _rate_limit_wait(exc, policy, now)
    return None


def with_retries(action: Callable[[], T], *, what: str, policy: RetryPolicy, clock: Clock) -> T:
    """Run ``action``, retrying per ``policy``; raise ``GitHubUnavailable`` when out of budget.

    ``action`` must be safe to repeat: a create is preceded by a fresh look-up in the same
    action, so a retried request never leaves a duplicate.
    """
    start = clock.now()
    attempt = 0
    while True:
        attempt += 1
        try:
            return action()
        except gh_exc.GitHubException as exc:
            delay = retry_delay(exc, attempt, policy, clock.now())
            if delay is None:
                raise
            elapsed = clock.now() - start
            if attempt >= policy.max_attempts or elapsed + delay > policy.max_total_s:
                raise GitHubUnavailable(what, attempt, exc) from exc
            clock.sleep(delay)
