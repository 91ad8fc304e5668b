"""Post a verdict from the environment: what ``roofguard comment`` and ``check --post`` run.

Credentials and the API URL come from the environment (``GITHUB_TOKEN`` or App credentials,
``GITHUB_API_URL``); inside Actions the step outputs are set, and when the token cannot write
(fork PRs) the verdict goes to the job summary and an artifact folder instead, without
failing the job.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TextIO

from github3 import exceptions as gh_exc

from rules import Verdict
from service.errors import BadInput
from service.github.actions import (
    append_step_summary,
    append_verdict_summary,
    in_actions,
    set_outputs,
    warning_line,
    write_artifact,
)
from service.github.auth import GitHubCredentials, resolve_api_url
from service.github.client import GitHubClient, PublishResult, make_client, publish_verdict
from service.github.common import CheckFailed
from service.github.policy import PublishPolicy, check_conclusion
from service.github.retry import Clock, GitHubFailed
from service.render.markdown import VerdictLinks, render_verdict
from service.settings import NOT_HTTP_URL, is_http_url


class SummaryMode(StrEnum):
    """When the verdict goes to the job summary (``PostOptions.summary``, ``comment --summary``)."""

    FALLBACK = "fallback"
    ALWAYS = "always"
    NEVER = "never"


#: Why nothing was posted by a job whose token is empty: a secret (a personal or bot user's
#: token passed as ``github-token``) is not given to a pull request from a fork.
NO_TOKEN = (
    "no token to post with: the job's GITHUB_TOKEN is empty, as a secret is on a pull request "
    "from a fork"
)
DEFAULT_ARTIFACT_DIR = "roofguard-verdict"


def artifact_dir(env: Mapping[str, str]) -> Path:
    """Where the artifact-ready verdict goes: ``ROOFGUARD_ARTIFACT_DIR`` or ./roofguard-verdict."""
    return Path(env.get("ROOFGUARD_ARTIFACT_DIR") or DEFAULT_ARTIFACT_DIR)


def moved_head(client: GitHubClient, repo: str, pr: int, sha: str) -> str | None:
    """``PR #42 of acme/kernels is at 0123456789ab`` where PR ``pr``'s head is not ``sha``.

    None where it is. The words are the ones the Action's users match on, whichever input
    (``--sha``, an artifact's ``pr``) the refusal then names.
    """
    head = client.pull_request_head(repo, pr)
    return None if head == sha else f"PR #{pr} of {repo} is at {head[:12]}"


def verify_head(client: GitHubClient, repo: str, pr: int, sha: str | None) -> None:
    """Refuse to post when PR ``pr``'s head is not ``sha`` (an artifact is untrusted data)."""
    if not sha:
        raise BadInput("--sha: required with --verify-head")
    moved = moved_head(client, repo, pr, sha)
    if moved is not None:
        raise BadInput(
            f"--sha: {moved}, not {sha[:12]}; refusing to post a verdict made for another commit"
        )


def _fallback(
    verdict: Verdict,
    markdown: str,
    links: VerdictLinks,
    result: PublishResult,
    env: Mapping[str, str],
    out: TextIO,
    summary: SummaryMode,
) -> None:
    folder = artifact_dir(env)
    write_artifact(verdict, markdown, folder)
    note = f"> ⚠️ roofguard could not post to the pull request: {result.reason}.\n\n"
    # with summary="never" the caller has written the verdict already: add only the note
    if summary == SummaryMode.NEVER:
        summarised = append_step_summary(note, env)
    else:
        summarised = append_verdict_summary(verdict, env, links=links, note=note)
    where = f"in the job summary and in {folder}/" if summarised else f"in {folder}/"
    what = "upload it as an artifact" if in_actions(env) else "verdict.json, verdict.md"
    _warn(f"{result.reason}. The verdict is {where} ({what}).", env, out)


def _warn(message: str, env: Mapping[str, str], out: TextIO) -> None:
    """A ``::warning`` workflow command inside Actions; elsewhere a plain line on stderr."""
    if in_actions(env):
        out.write(warning_line("roofguard", message) + "\n")
    else:
        sys.stderr.write(f"roofguard: warning: {message}\n")


@dataclass(frozen=True)
class PostTarget:
    """Where a verdict goes.

    Attributes:
        repo: OWNER/NAME (from a trusted source, never from an artifact).
        pr: PR number; None posts only the check or status.
        sha: Commit for the check run or status.
        check_head: Refuse unless PR ``pr``'s head commit is ``sha`` (fork-safe posting).
    """

    repo: str
    pr: int | None
    sha: str | None
    check_head: bool = False


@dataclass(frozen=True)
class PostOptions:
    """How a verdict is posted.

    Attributes:
        github_url: ``--github-url`` (API URL or GHES root); default ``GITHUB_API_URL``.
        policy: Failure policy and check kind.
        links: Run page, workflow run, charts, artifact name for the comment (default: the
            workflow run of the environment).
        summary: Append the verdict to the job summary only when posting failed (fallback,
            default), always, or never (the caller wrote it: ``check --post``); a failed
            post always adds a one-line note.
        clock: Time source for retries (tests).
    """

    github_url: str | None = None
    policy: PublishPolicy = field(default_factory=PublishPolicy)
    links: VerdictLinks | None = None
    summary: SummaryMode = SummaryMode.FALLBACK
    clock: Clock | None = None


def as_posted(verdict: Verdict, target: PostTarget) -> Verdict:
    """``verdict`` naming ``target``'s repository and PR, as posted (and as a dry run shows it).

    Where we post is authoritative: the marker in the body must match the one looked up.
    """
    return verdict.model_copy(update={"repo": target.repo, "pull_request": target.pr})


def post_verdict_from_env(
    verdict: Verdict,
    target: PostTarget,
    options: PostOptions | None = None,
    *,
    env: Mapping[str, str] | None = None,
    out: TextIO | None = None,
) -> PublishResult:
    """Render ``verdict`` and publish it to ``target``, with credentials from ``env``.

    Args:
        verdict: The verdict to post.
        target: Repository, PR, commit, and whether to verify the PR's head first.
        options: API URL, policy, links, job-summary mode, clock.
        env: Environment (default ``os.environ``).
        out: Where workflow commands go (default stdout); outside Actions a failed post's
            warning is a plain line on stderr.

    Returns:
        The ``PublishResult``; a read-only token is reported in it, not raised.
    """
    env = os.environ if env is None else env
    options = options or PostOptions()
    verdict = as_posted(verdict, target)
    links = options.links or workflow_links(env)
    markdown = render_verdict(verdict, links=links)
    result, failed = _attempt(verdict, markdown, target, options, env, links)
    # posted with a reason: the comment, but no check run or status (a note, not the fallback)
    partial = result.reason if result.posted and result.reason else ""
    note = f"> ⚠️ roofguard: {partial.rstrip('.')}.\n\n" if partial else ""
    if not result.posted:
        _fallback(verdict, markdown, links, result, env, out or sys.stdout, options.summary)
    elif options.summary == SummaryMode.ALWAYS:
        append_verdict_summary(verdict, env, links=links, note=note)
    elif note:
        append_step_summary(note, env)
    if partial:
        _warn(partial, env, out or sys.stdout)
    set_outputs(result_outputs(result), env)
    if failed is not None:  # the verdict is kept (summary, artifact, outputs): now the error
        raise failed
    return result


def _attempt(
    verdict: Verdict,
    markdown: str,
    target: PostTarget,
    options: PostOptions,
    env: Mapping[str, str],
    links: VerdictLinks,
) -> tuple[PublishResult, GitHubFailed | None]:
    """The publish's result; where GitHub failed, also the error (the comment posted is kept).

    Only a read-only token used to reach the fallback: bad credentials, GitHub down past the
    retries or a rate limit past its budget lost the verdict (no summary, artifact, outputs);
    so did a GitHub App's failed login, which was tried once.
    """
    conclusion = check_conclusion(verdict, options.policy.failure)
    credentials = _credentials(env)
    if credentials is None:
        return PublishResult(False, "skipped", None, None, None, conclusion, NO_TOKEN), None
    api_url = resolve_api_url(options.github_url, env)
    try:  # an App's login is a request too: its failure keeps the verdict as any other does
        client = make_client(credentials, api_url=api_url, clock=options.clock)
        return _publish(client, verdict, markdown, target, options.policy, links.run_url), None
    except CheckFailed as exc:
        return check_failed_result(exc, conclusion)
    except GitHubFailed as exc:
        return PublishResult(False, "skipped", None, None, None, conclusion, str(exc)), exc


def check_failed_result(exc: CheckFailed, conclusion: str) -> tuple[PublishResult, GitHubFailed]:
    """The result of a check run or status GitHub failed: a comment posted before it is kept.

    The error names the check and the commit, not the PR its comment went to. The CLI
    (``roofguard comment``) and the service's posting (``service.api.publish``) report it so.
    """
    cause = exc.cause
    said = str(cause)
    if isinstance(cause, gh_exc.GitHubException):
        said = f"GitHub: {cause}{_details(cause)}"
    if exc.comment is None:
        failed = GitHubFailed(f"{said} (posting the {exc.what})")
        return PublishResult(False, "skipped", None, None, None, conclusion, str(failed)), failed
    where = f" ({exc.comment.comment_url})" if exc.comment.comment_url else ""
    failed = GitHubFailed(f"comment posted{where}, but not the {exc.what}: {said}")
    return replace(exc.comment, reason=str(failed)), failed


def _credentials(env: Mapping[str, str]) -> GitHubCredentials | None:
    """Credentials from ``env``; None for a job in Actions given an empty token (``NO_TOKEN``).

    Raises:
        BadInput: Outside Actions, no token; anywhere, incomplete App credentials.
    """
    names = ("GITHUB_TOKEN", "GH_TOKEN", "ROOFGUARD_GITHUB_APP_ID")
    if in_actions(env) and not any(env.get(name, "").strip() for name in names):
        return None
    return GitHubCredentials.from_env(env)


def _publish(
    client: GitHubClient,
    verdict: Verdict,
    markdown: str,
    target: PostTarget,
    policy: PublishPolicy,
    details_url: str | None,
) -> PublishResult:
    try:
        if target.check_head and target.pr is not None:
            verify_head(client, target.repo, target.pr, target.sha)
        return publish_verdict(
            verdict,
            markdown,
            repo=target.repo,
            pr=target.pr,
            sha=target.sha,
            client=client,
            policy=policy,
            details_url=details_url,
        )
    except gh_exc.GitHubException as exc:
        raise GitHubFailed(f"GitHub: {exc}{_details(exc)} ({_where(target)})") from exc


def _details(exc: gh_exc.GitHubException) -> str:
    """GitHub's own reasons for a refusal (a 422's ``errors``: "body is too long ...")."""
    errors = getattr(exc, "errors", None) or []
    said = [str(e.get("message") or e.get("code")) for e in errors if isinstance(e, dict)]
    return f": {'; '.join(said)}" if said else ""


def _where(target: PostTarget) -> str:
    """``posting to PR #42 of acme/kernels``: a 404 alone does not say what was not found."""
    if target.pr is not None:
        return f"posting to PR #{target.pr} of {target.repo}"
    return f"posting to commit {(target.sha or '?')[:12]} of {target.repo}"


def workflow_links(env: Mapping[str, str], run_url: str | None = None) -> VerdictLinks:
    """Links for the comment: the dashboard run page and, inside Actions, the workflow run.

    Raises:
        BadInput: ``run_url`` (``--run-url``) is not an absolute http(s) URL.
    """
    server, repo, run_id = (
        env.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    )
    summary = f"{server}/{repo}/actions/runs/{run_id}" if server and repo and run_id else None
    return VerdictLinks(run_url=checked_run_url(run_url), summary_url=summary)


def checked_run_url(url: str | None) -> str | None:
    """``url`` when it is an absolute http(s) URL, None when empty; else BadInput naming it.

    It becomes the check run's ``details_url`` (the status's ``target_url``), which GitHub
    refuses with 422 unless http(s), after the comment was posted; and a ``javascript:`` link.
    """
    if not url:
        return None
    if not is_http_url(url):
        raise BadInput(f"--run-url: {NOT_HTTP_URL}: {url!r}")
    return url


def result_outputs(result: PublishResult) -> dict[str, str]:
    """Step outputs describing a publish."""
    return {
        "conclusion": result.conclusion,
        "should-fail": "true" if result.conclusion == "failure" else "false",
        "posted": "true" if result.posted else "false",
        "comment-url": result.comment_url or "",
        "check": result.check_kind or "",
    }
