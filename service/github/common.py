"""What every GitHub module shares: the read-only-token error, the publish result, OWNER/NAME."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from github3 import exceptions as gh_exc

from service.errors import BadInput
from service.github.retry import GitHubFailed

READ_ONLY_MESSAGE = "Resource not accessible by integration"
CommentAction = Literal["created", "updated", "unchanged", "skipped"]


class ReadOnlyToken(Exception):
    """The token may read but not write (fork PRs); carries what was refused."""

    def __init__(self, what: str) -> None:
        self.what = what
        super().__init__(f"{what}: {READ_ONLY_MESSAGE}")


def is_read_only(exc: Exception) -> bool:
    """A 403 that means the token cannot write here (not a rate limit)."""
    return isinstance(exc, gh_exc.ForbiddenError) and READ_ONLY_MESSAGE in str(exc)


@dataclass(frozen=True)
class PublishResult:
    """What ``publish_verdict`` did.

    Attributes:
        posted: Whether the verdict reached the PR: its comment, or without a PR the check
            run or status. False when nothing could be written (read-only token).
        comment_action: created, updated, unchanged (the same body: not sent) or skipped.
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


class CheckFailed(GitHubFailed):
    """The check run or commit status on a commit failed (for another reason than read-only).

    Attributes:
        what: ``check run on commit 0123456789ab of acme/kernels``.
        cause: GitHub's error (a github3 exception, or ``GitHubUnavailable``).
        comment: The sticky comment posted before it; None where none was.
    """

    def __init__(self, what: str, cause: Exception) -> None:
        self.what = what
        self.cause = cause
        self.comment: PublishResult | None = None
        super().__init__(f"{what}: {cause}")


def split_repo(repo: str) -> tuple[str, str]:
    """``OWNER/NAME`` -> (owner, name); BadInput naming ``--repo`` otherwise."""
    owner, _, name = repo.partition("/")
    if not owner or not name or "/" in name:
        raise BadInput(f"--repo: expected OWNER/NAME, got {repo!r}")
    return owner, name
