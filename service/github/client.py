"""Publishing verdicts to GitHub with github3.py 4.0.1: sticky comment, check run or status.

The specifics (auth workarounds, limits, fork tokens):

* one comment per PR per device, found by its hidden marker *and* by our own login (anyone can
  paste a marker), edited in place, created only when absent; extra copies from a race are
  deleted; the look-up is repeated inside every retry so a retried POST never duplicates;
* a check run when the token allows it (``GITHUB_TOKEN`` needs the installation-auth
  workaround), else a commit status; the conclusion comes from the failure policy;
* a read-only token (PRs from forks: 403 "Resource not accessible by integration") is not an
  error: ``PublishResult.posted`` is False and the caller writes the job summary instead.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import github3
from github3 import exceptions as gh_exc
from github3.session import GitHubSession

from rules.verdict import Verdict
from service.errors import BadInput
from service.github.auth import PUBLIC_API, GitHubCredentials
from service.github.policy import (
    CheckKind,
    FailurePolicy,
    PublishPolicy,
    check_conclusion,
    status_state,
)
from service.github.retry import Clock, GitHubFailed, RetryPolicy, SystemClock, with_retries
from service.render.escape import marker_value
from service.render.markdown import (
    CHECK_OUTPUT_LIMIT,
    GITHUB_COMMENT_LIMIT,
    check_title,
    render_check_summary,
    verdict_marker,
)

T = TypeVar("T")
READ_ONLY_MESSAGE = "Resource not accessible by integration"
CommentAction = Literal["created", "updated", "skipped"]


class ReadOnlyToken(Exception):
    """The token may read but not write (fork PRs); carries what was refused."""

    def __init__(self, what: str) -> None:
        self.what = what
        super().__init__(f"{what}: {READ_ONLY_MESSAGE}")


def _is_read_only(exc: Exception) -> bool:
    return isinstance(exc, gh_exc.ForbiddenError) and READ_ONLY_MESSAGE in str(exc)


@dataclass(frozen=True)
class PublishResult:
    """What ``publish_verdict`` did.

    Attributes:
        posted: False when nothing could be written (read-only token).
        comment_action: created, updated or skipped.
        comment_id: Id of the sticky comment, when posted.
        comment_url: Its html URL.
        check_kind: "check-run", "status" or None.
        conclusion: success, neutral or failure (the failure policy applied).
        reason: Why something was skipped, in words.
    """

    posted: bool
    comment_action: CommentAction
    comment_id: int | None
    comment_url: str | None
    check_kind: str | None
    conclusion: str
    reason: str | None = None


def split_repo(repo: str) -> tuple[str, str]:
    """``OWNER/NAME`` -> (owner, name); BadInput naming ``--repo`` otherwise."""
    owner, _, name = repo.partition("/")
    if not owner or not name or "/" in name:
        raise BadInput(f"--repo: expected OWNER/NAME, got {repo!r}")
    return owner, name


class GitHubClient:
    """A github3.py session plus who we are and how to retry.

    Args:
        gh: The github3 client (base URL and auth already set).
        bot_login: Our own login; sticky comments by anyone else are never touched.
        retry: Retry bounds.
        clock: Time source for backoff (injectable for tests).
    """

    def __init__(
        self,
        gh: github3.GitHub,
        *,
        bot_login: str,
        retry: RetryPolicy | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.gh = gh
        self.bot_login = bot_login
        self.retry = retry or RetryPolicy()
        self.clock = clock or SystemClock()

    def call(self, what: str, action: Callable[[], T]) -> T:
        """Run ``action`` with retries; a read-only 403 becomes ``ReadOnlyToken``."""
        try:
            return with_retries(action, what=what, policy=self.retry, clock=self.clock)
        except gh_exc.ForbiddenError as exc:
            if _is_read_only(exc):
                raise ReadOnlyToken(what) from exc
            raise

    def _own(self, comment: Any, marker: str) -> bool:
        author = getattr(comment.user, "login", None)
        return author == self.bot_login and marker in (comment.body or "")

    def _upsert_once(self, repo: str, pr: int, marker: str, body: str) -> tuple[Any, str]:
        issue = self.gh.issue(*split_repo(repo), pr)
        mine = [c for c in issue.comments() if self._own(c, marker)]
        if not mine:
            return issue.create_comment(body), "created"
        keep, extras = mine[-1], mine[:-1]
        if keep.body != body:
            keep.edit(body)
        for extra in extras:  # a race left copies: heal it
            extra.delete()
        return keep, "updated"

    def upsert_comment(self, repo: str, pr: int, marker: str, body: str) -> tuple[Any, str]:
        """Edit our comment with ``marker`` on PR ``pr``, or create it; (comment, action)."""
        if marker not in body:
            body = f"{marker}\n{body}"
        if len(body) > GITHUB_COMMENT_LIMIT:
            raise BadInput(f"comment body has {len(body)} characters (GitHub allows 65,536)")
        return self.call(
            f"sticky comment on {repo}#{pr}", lambda: self._upsert_once(repo, pr, marker, body)
        )

    def create_check_run(
        self,
        repo: str,
        sha: str,
        *,
        name: str,
        conclusion: str,
        title: str,
        summary: str,
        text: str,
        details_url: str | None,
    ) -> Any:
        """A completed check run on ``sha``."""
        now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        output = {
            "title": title,
            "summary": summary[:CHECK_OUTPUT_LIMIT],
            "text": text[:CHECK_OUTPUT_LIMIT],
        }

        def create() -> Any:
            repository = self.gh.repository(*split_repo(repo))
            return repository.create_check_run(
                name=name,
                head_sha=sha,
                details_url=details_url,
                status="completed",
                conclusion=conclusion,
                completed_at=now,
                output=output,
            )

        return self.call(f"check run on {repo}@{sha[:12]}", create)

    def create_status(
        self,
        repo: str,
        sha: str,
        *,
        state: str,
        context: str,
        description: str,
        target_url: str | None,
    ) -> Any:
        """A commit status on ``sha`` (description cut to GitHub's 140 characters)."""

        def create() -> Any:
            repository = self.gh.repository(*split_repo(repo))
            return repository.create_status(
                sha, state, target_url=target_url, description=description[:140], context=context
            )

        return self.call(f"commit status on {repo}@{sha[:12]}", create)

    def pull_request_head(self, repo: str, pr: int) -> str:
        """The head SHA of PR ``pr`` (to check an untrusted artifact's claim)."""
        return str(
            self.call(f"{repo}#{pr}", lambda: self.gh.pull_request(*split_repo(repo), pr)).head.sha
        )

    def _upsert_issue_once(self, repo: str, title: str, body: str, labels: list[str]) -> Any:
        repository = self.gh.repository(*split_repo(repo))
        marker = issue_marker(title)
        for issue in repository.issues(labels=",".join(labels) or None, state="open"):
            author = getattr(issue.user, "login", None)
            if issue.title == title and author == self.bot_login and marker in (issue.body or ""):
                if issue.body != body:
                    issue.edit(body=body)
                return issue
        return repository.create_issue(title, body=body, labels=labels)

    def upsert_issue(self, repo: str, title: str, body: str, labels: list[str]) -> Any:
        """Update our open issue with ``title`` (and its marker) and ``labels``, or create it.

        Used by the weekly digest: re-running a week's digest edits the same issue.
        """
        marker = issue_marker(title)
        if marker not in body:
            body = f"{marker}\n{body}"
        return self.call(
            f"issue {title!r} on {repo}", lambda: self._upsert_issue_once(repo, title, body, labels)
        )


def issue_marker(title: str) -> str:
    """Hidden marker of an issue roofguard maintains (the digest)."""
    return f"<!-- roofguard:issue title={marker_value(title)} -->"


def make_client(
    credentials: GitHubCredentials,
    *,
    api_url: str = PUBLIC_API,
    bot_login: str | None = None,
    retry: RetryPolicy | None = None,
    clock: Clock | None = None,
) -> GitHubClient:
    """A client for ``api_url`` (from ``resolve_api_url``) authenticated by ``credentials``."""
    session = GitHubSession(default_connect_timeout=4, default_read_timeout=10)
    gh = github3.GitHub(session=session)
    gh.session.base_url = api_url.rstrip("/")
    try:
        credentials.login(gh)
    except gh_exc.GitHubException as exc:
        raise GitHubFailed(f"GitHub App installation login failed: {exc}") from exc
    return GitHubClient(gh, bot_login=bot_login or credentials.bot_login, retry=retry, clock=clock)


def _publish_check(
    client: GitHubClient,
    verdict: Verdict,
    markdown: str,
    *,
    repo: str,
    sha: str,
    policy: PublishPolicy,
    conclusion: str,
    details_url: str | None,
) -> str | None:
    if policy.check in (CheckKind.AUTO, CheckKind.CHECK_RUN):
        try:
            client.create_check_run(
                repo,
                sha,
                name=policy.check_name(verdict.device),
                conclusion=conclusion,
                title=check_title(verdict),
                summary=render_check_summary(verdict),
                text=markdown,
                details_url=details_url,
            )
            return "check-run"
        except (
            ReadOnlyToken,
            gh_exc.ForbiddenError,
            gh_exc.NotFoundError,
            gh_exc.MissingAppInstallationAuthentication,
        ):
            if policy.check == CheckKind.CHECK_RUN:
                raise
    if policy.check in (CheckKind.AUTO, CheckKind.STATUS):
        client.create_status(
            repo,
            sha,
            state=status_state(conclusion),
            context=policy.check_name(verdict.device),
            description=check_title(verdict),
            target_url=details_url,
        )
        return "status"
    return None


def publish_verdict(
    verdict: Verdict,
    markdown: str,
    *,
    repo: str,
    pr: int | None,
    sha: str | None,
    client: GitHubClient,
    policy: PublishPolicy | None = None,
    details_url: str | None = None,
) -> PublishResult:
    """Post ``markdown`` as the PR's sticky comment and a check run or status on ``sha``.

    Args:
        verdict: The verdict (conclusion, device for the marker and check name).
        markdown: The rendered comment (``render_verdict``).
        repo: OWNER/NAME.
        pr: PR number; None posts no comment (e.g. a push to the default branch).
        sha: Commit for the check run or status; None posts neither.
        client: From ``make_client``.
        policy: Failure policy and check kind.
        details_url: Link for the check or status (the dashboard run page).

    Returns:
        What was done. A read-only token gives ``posted=False`` with the reason, not an error.
    """
    policy = policy or PublishPolicy()
    conclusion = check_conclusion(verdict, policy.failure)
    comment, action = None, "skipped"
    try:
        if pr is not None:
            marker = verdict_marker(repo, pr, verdict.device)
            comment, action = client.upsert_comment(repo, pr, marker, markdown)
    except ReadOnlyToken as exc:
        return PublishResult(False, "skipped", None, None, None, conclusion, _read_only(repo, exc))
    kind, reason = None, None
    if sha and policy.check != CheckKind.NONE:
        try:
            kind = _publish_check(
                client,
                verdict,
                markdown,
                repo=repo,
                sha=sha,
                policy=policy,
                conclusion=conclusion,
                details_url=details_url,
            )
        except ReadOnlyToken as exc:
            if comment is None:
                return PublishResult(
                    False, "skipped", None, None, None, conclusion, _read_only(repo, exc)
                )
            reason = f"comment posted, but {exc} (grant checks: write or statuses: write)"
    comment_id, url = getattr(comment, "id", None), getattr(comment, "html_url", None)
    return PublishResult(True, action, comment_id, url, kind, conclusion, reason)  # type: ignore[arg-type]


def _read_only(repo: str, exc: ReadOnlyToken) -> str:
    return (
        f"the token cannot write to {repo} ({exc}); pull requests from forks get a "
        "read-only GITHUB_TOKEN: use the fork-safe workflow pair to post the verdict"
    )


__all__ = [
    "CheckKind",
    "FailurePolicy",
    "GitHubClient",
    "PublishPolicy",
    "PublishResult",
    "ReadOnlyToken",
    "check_conclusion",
    "make_client",
    "publish_verdict",
    "split_repo",
]
