"""Posting verdicts to GitHub from the service (after uploads and webhook events)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Protocol

from github3 import exceptions as gh_exc

from rules import Verdict
from service.errors import ServiceError
from service.github.auth import APP_ENV, GitHubCredentials, resolve_api_url
from service.github.client import GitHubClient, make_client, publish_verdict
from service.github.common import CheckFailed
from service.github.policy import PublishPolicy, check_conclusion
from service.github.publish import check_failed_result
from service.settings import Settings

log = logging.getLogger("roofguard.api")

#: Makes an authenticated GitHub client (one per posting: installation tokens expire).
GitHubFactory = Callable[[], GitHubClient]


def github_factory(settings: Settings) -> GitHubFactory | None:
    """A client factory from ``ROOFGUARD_GITHUB_TOKEN``; None when the service has no token."""
    if settings.github_token is None:
        return None
    # without ROOFGUARD_GITHUB_BOT_LOGIN the client asks GitHub who the token is (GET /user)
    credentials = GitHubCredentials(
        token=settings.github_token.get_secret_value(), login_name=settings.github_bot_login or None
    )
    api_url = resolve_api_url(settings.github_api_url, {})
    return lambda: make_client(credentials, api_url=api_url)


def github_from_env(settings: Settings, env: Mapping[str, str]) -> GitHubFactory | None:
    """GitHub App credentials from ``env``, else the token of ``settings``; None without either.

    App credentials are used when ``ROOFGUARD_GITHUB_APP_ID`` and
    ``ROOFGUARD_GITHUB_APP_INSTALLATION_ID`` are set (the key and slug are read with them).
    """
    if not all(env.get(name) for name in APP_ENV):
        return github_factory(settings)
    credentials = GitHubCredentials.from_env(env)
    api_url = resolve_api_url(settings.github_api_url, env)
    return lambda: make_client(credentials, api_url=api_url)


class Judged(Protocol):
    """What posting needs of a judged run: a check's outcome or an answer stored before."""

    @property
    def verdict(self) -> Verdict:
        """The verdict to post."""

    @property
    def run_id(self) -> int:
        """The judged run's id in the store."""


def post_outcome(
    github: GitHubFactory,
    outcome: Judged,
    markdown: str,
    *,
    repo: str,
    pr: int | None,
    sha: str | None,
    details_url: str,
) -> tuple[bool, str | None]:
    """Post the verdict as the PR's sticky comment and a check on ``sha``.

    Returns:
        Whether it was posted, and why not. GitHub failing is reported, not raised: the run
        (or the accepted baseline) is stored either way, and the post can be repeated. A
        check GitHub failed after the comment was posted is posted, with the reason naming
        the comment and the check (as ``roofguard comment`` reports it).
    """
    try:
        result = publish_verdict(
            outcome.verdict,
            markdown,
            repo=repo,
            pr=pr,
            sha=sha,
            client=github(),
            details_url=details_url,
        )
    except CheckFailed as exc:
        return _check_failed(exc, outcome, repo, pr)
    except (ServiceError, gh_exc.GitHubException) as exc:
        log.warning(
            "verdict of run %d not posted to %s#%s: %s",
            outcome.run_id,
            repo,
            pr,
            type(exc).__name__,
        )
        return False, f"GitHub failed: {exc}"
    log.info(
        "posted verdict of run %d to %s#%s: comment %s, check %s",
        outcome.run_id,
        repo,
        pr,
        result.comment_action,
        result.check_kind,
    )
    return result.posted, result.reason


def _check_failed(
    exc: CheckFailed, outcome: Judged, repo: str, pr: int | None
) -> tuple[bool, str | None]:
    """A check GitHub failed: posted where the comment was, the reason naming both (as the CLI)."""
    # the policy publish_verdict applied: the conclusion of a result without a comment
    conclusion = check_conclusion(outcome.verdict, PublishPolicy().failure)
    result, _ = check_failed_result(exc, conclusion)
    log.warning(
        "verdict of run %d to %s#%s: comment %s, but not the %s: %s",
        outcome.run_id,
        repo,
        pr,
        "posted" if result.posted else "not posted",
        exc.what,
        type(exc.cause).__name__,
    )
    return result.posted, result.reason
