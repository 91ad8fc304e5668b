"""Publishing verdicts to GitHub with github3.py 4.0.1: sticky comment, check run or status.

The specifics (auth workarounds, limits, fork tokens):

* one comment per PR per device, found by its hidden marker as its first line (the body quotes
  kernel names, which may hold a marker) *and* by our own login (anyone can paste a marker),
  edited in place, created only when absent or when GitHub refuses the edit (another App's
  copy of the marker: ``sticky``); extra copies from a race are deleted; the look-up is
  repeated inside every retry so a retried POST never duplicates;
* a check run when the token allows it (``GITHUB_TOKEN`` needs the installation-auth
  workaround), else a commit status; the conclusion comes from the failure policy;
* a read-only token (PRs from forks: 403 "Resource not accessible by integration") is not an
  error: ``PublishResult.posted`` is False and the caller writes the job summary instead.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import github3
from github3 import exceptions as gh_exc
from github3.session import GitHubSession

from rules import Verdict
from service.errors import BadInput
from service.github.auth import ANY_APP_BOT, PUBLIC_API, GitHubCredentials
from service.github.common import (
    CheckFailed,
    CommentAction,
    PublishResult,
    ReadOnlyToken,
    is_read_only,
    split_repo,
)
from service.github.markers import issue_marker, opens_with, with_marker
from service.github.policy import (
    CheckKind,
    FailurePolicy,
    PublishPolicy,
    check_conclusion,
    status_state,
)
from service.github.retry import Clock, GitHubFailed, RetryPolicy, SystemClock, with_retries
from service.github.sticky import CreateSent, upsert_sticky
from service.render.markdown import (
    CHECK_OUTPUT_LIMIT,
    GITHUB_COMMENT_LIMIT,
    check_title,
    render_check_summary,
    verdict_marker,
)

T = TypeVar("T")


class GitHubClient:
    """A github3.py session plus who we are and how to retry.

    Args:
        gh: The github3 client (base URL and auth already set).
        bot_login: Our own login; sticky comments by anyone else are never touched. None:
            asked from GitHub on first use (``learn_login``).
        retry: Retry bounds.
        clock: Time source for backoff (injectable for tests).
    """

    def __init__(
        self,
        gh: github3.GitHub,
        *,
        bot_login: str | None,
        retry: RetryPolicy | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.gh = gh
        self._bot_login = bot_login
        self.retry = retry or RetryPolicy()
        self.clock = clock or SystemClock()

    @property
    def bot_login(self) -> str:
        """Our login: given, or learned once from ``GET /user``."""
        if self._bot_login is None:
            self._bot_login = self.learn_login()
        return self._bot_login

    def learn_login(self) -> str:
        """The token's own login from ``GET /user``, else ``ANY_APP_BOT``.

        A personal access token or a bot user's token answers with its user. An installation
        token is refused with 403 "Resource not accessible by integration": ``GITHUB_TOKEN``,
        whose comments are ``github-actions[bot]``'s, or a GitHub App's (the pattern of
        ``actions/create-github-app-token``), whose are ``<app-slug>[bot]``'s.
        """
        try:
            user = self.call("GET /user", self.gh.me)
        except ReadOnlyToken:
            return ANY_APP_BOT
        return str(user.login)

    def _ours(self, author: object) -> bool:
        """Whether ``author`` is us: our login, or any App's bot when it cannot be learned.

        No user's login can end in ``[bot]``: only an App installed on the repository could
        write such a comment, never a contributor spoofing the marker.
        """
        login = self.bot_login
        return author == login or (login == ANY_APP_BOT and str(author).endswith(login))

    def call(self, what: str, action: Callable[[], T]) -> T:
        """Run ``action`` with retries; a read-only 403 becomes ``ReadOnlyToken``."""
        try:
            return with_retries(action, what=what, policy=self.retry, clock=self.clock)
        except gh_exc.ForbiddenError as exc:
            if is_read_only(exc):
                raise ReadOnlyToken(what) from exc
            raise

    def _own(self, comment: Any, marker: str) -> bool:
        author = getattr(comment.user, "login", None)
        return self._ours(author) and opens_with(comment.body, marker)

    def _upsert_once(
        self, repo: str, pr: int, marker: str, body: str, tries: CreateSent
    ) -> tuple[Any, CommentAction]:
        issue = self.gh.issue(*split_repo(repo), pr)
        marked = [c for c in issue.comments() if self._own(c, marker)]
        return upsert_sticky(issue, marked, body, tries)

    def upsert_comment(
        self, repo: str, pr: int, marker: str, body: str
    ) -> tuple[Any, CommentAction]:
        """Edit our comment with ``marker`` on PR ``pr``, or create it; (comment, action)."""
        body = with_marker(body, marker)
        if len(body) > GITHUB_COMMENT_LIMIT:
            raise BadInput(f"comment body has {len(body)} characters (GitHub allows 65,536)")
        tries = CreateSent()
        what = f"sticky comment on {repo}#{pr}"
        return self.call(what, lambda: self._upsert_once(repo, pr, marker, body, tries))

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
        what = f"reading PR #{pr} of {repo}"
        return str(self.call(what, lambda: self.gh.pull_request(*split_repo(repo), pr)).head.sha)

    def _upsert_issue_once(self, repo: str, title: str, body: str, labels: list[str]) -> Any:
        repository = self.gh.repository(*split_repo(repo))
        marker = issue_marker(title)
        for issue in repository.issues(labels=",".join(labels) or None, state="open"):
            author = getattr(issue.user, "login", None)
            if issue.title == title and self._ours(author) and opens_with(issue.body, marker):
                if issue.body != body:
                    issue.edit(body=body)
                return issue
        return repository.create_issue(title, body=body, labels=labels)

    def upsert_issue(self, repo: str, title: str, body: str, labels: list[str]) -> Any:
        """Update our open issue with ``title`` (and its marker) and ``labels``, or create it.

        Used by the weekly digest: re-running a week's digest edits the same issue.
        """
        body = with_marker(body, issue_marker(title))
        return self.call(
            f"issue {title!r} on {repo}", lambda: self._upsert_issue_once(repo, title, body, labels)
        )


def make_client(
    credentials: GitHubCredentials,
    *,
    api_url: str = PUBLIC_API,
    bot_login: str | None = None,
    retry: RetryPolicy | None = None,
    clock: Clock | None = None,
) -> GitHubClient:
    """A client for ``api_url`` (from ``resolve_api_url``) authenticated by ``credentials``.

    Raises:
        GitHubFailed: An App's installation login refused, or failed past the retries.
    """
    session = GitHubSession(default_connect_timeout=4, default_read_timeout=10)
    gh = github3.GitHub(session=session)
    gh.session.base_url = api_url.rstrip("/")
    retry, clock = retry or RetryPolicy(), clock or SystemClock()
    credentials.login(gh, retry=retry, clock=clock)
    return GitHubClient(gh, bot_login=bot_login or credentials.bot_login, retry=retry, clock=clock)


#: What a refused check run looks like; ``auto`` then falls back to a commit status.
_CHECK_RUN_REFUSED = (
    ReadOnlyToken,
    gh_exc.ForbiddenError,
    gh_exc.NotFoundError,
    gh_exc.MissingAppInstallationAuthentication,
)


@dataclass(frozen=True)
class _CheckPost:
    """What the check run or the commit status says, and where."""

    repo: str
    sha: str
    name: str
    conclusion: str
    details_url: str | None


def _post_check_run(
    client: GitHubClient, verdict: Verdict, markdown: str, post: _CheckPost
) -> None:
    client.create_check_run(
        post.repo,
        post.sha,
        name=post.name,
        conclusion=post.conclusion,
        title=check_title(verdict),
        summary=render_check_summary(verdict, comment=markdown),
        text=markdown,
        details_url=post.details_url,
    )


def _post_status(client: GitHubClient, verdict: Verdict, post: _CheckPost) -> None:
    client.create_status(
        post.repo,
        post.sha,
        state=status_state(post.conclusion),
        context=post.name,
        description=check_title(verdict),
        target_url=post.details_url,
    )


def _publish_check(
    client: GitHubClient, verdict: Verdict, markdown: str, post: _CheckPost, kind: CheckKind
) -> str | None:
    """A check run (``auto``: a commit status when check runs are refused); the kind posted.

    Raises:
        CheckFailed: GitHub failed the one tried last, naming it (a read-only token aside).
    """
    trying = "check run"
    try:
        if kind in (CheckKind.AUTO, CheckKind.CHECK_RUN):
            try:
                _post_check_run(client, verdict, markdown, post)
                return "check-run"
            except _CHECK_RUN_REFUSED:
                if kind == CheckKind.CHECK_RUN:
                    raise
        if kind in (CheckKind.AUTO, CheckKind.STATUS):
            trying = "commit status"
            _post_status(client, verdict, post)
            return "status"
    except (gh_exc.GitHubException, GitHubFailed) as exc:
        raise CheckFailed(f"{trying} on commit {post.sha[:12]} of {post.repo}", exc) from exc
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
        What was done. A read-only token gives ``posted=False`` with the reason, not an error;
        a check run or status GitHub failed raises ``CheckFailed`` with the comment posted.
    """
    policy = policy or PublishPolicy()
    conclusion = check_conclusion(verdict, policy.failure)
    refused = PublishResult(False, "skipped", None, None, None, conclusion)
    try:
        comment, action = _comment(client, verdict, markdown, repo, pr)
    except ReadOnlyToken as exc:
        return replace(refused, reason=_read_only(repo, exc))
    comment_id, url = getattr(comment, "id", None), getattr(comment, "html_url", None)
    posted = PublishResult(True, action, comment_id, url, None, conclusion)
    if not sha or policy.check == CheckKind.NONE:
        return posted
    post = _CheckPost(repo, sha, policy.check_name(verdict.device), conclusion, details_url)
    try:
        return replace(
            posted, check_kind=_publish_check(client, verdict, markdown, post, policy.check)
        )
    except ReadOnlyToken as exc:
        if comment is None:
            return replace(refused, reason=_read_only(repo, exc))
        return replace(
            posted, reason=f"comment posted, but {exc} (grant checks: write or statuses: write)"
        )
    except CheckFailed as exc:  # the comment stands: the caller reports it with the error
        exc.comment = posted if comment is not None else None
        raise


def _comment(
    client: GitHubClient, verdict: Verdict, markdown: str, repo: str, pr: int | None
) -> tuple[Any, CommentAction]:
    """The sticky comment on PR ``pr`` (none without a PR)."""
    if pr is None:
        return None, "skipped"
    return client.upsert_comment(repo, pr, verdict_marker(repo, pr, verdict.device), markdown)


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
