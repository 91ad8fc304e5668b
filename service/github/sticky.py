"""Which marked comment is roofguard's own sticky comment: edit it, or post a new one.

With an installation token roofguard cannot learn its login, so any App's bot that wrote a
comment opening with the marker may be us. The first such comment's author is taken to be us
(another App mirroring the comment copies the marker in later). Where another App posted a
copy of the marker first, GitHub refuses our edit of it (403 or 404): the next author's
comment is tried, and failing all, a new comment is posted whose second line names the
refused comments, so that later runs skip them and edit the new one rather than be refused
again and post one more each time.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection
from typing import Any

from github3 import exceptions as gh_exc

from service.github.common import CommentAction, is_read_only
from service.github.retry import RetryPolicy, retry_delay

log = logging.getLogger("roofguard.github")

_NOT_OURS = re.compile(r"<!-- roofguard:not-ours (\d+(?: \d+)*) -->")


def not_ours(body: str | None) -> set[int]:
    """Comment ids that ``body``'s second line names as refused to us (another App's)."""
    lines = (body or "").split("\n", 2)
    match = _NOT_OURS.fullmatch(lines[1].rstrip("\r")) if len(lines) > 1 else None
    return {int(i) for i in match.group(1).split()} if match else set()


def with_not_ours(body: str, ids: Collection[int]) -> str:
    """``body`` (its marker the first line) naming ``ids`` on its second line, if any."""
    if not ids:
        return body
    marker, _, rest = body.partition("\n")
    names = " ".join(str(i) for i in sorted(ids))
    return f"{marker}\n<!-- roofguard:not-ours {names} -->\n{rest}"


def refused(exc: gh_exc.GitHubException) -> bool:
    """Whether an edit's error says the comment is not ours (another App's) or is gone.

    A read-only token's 403 and a rate limit's are not refusals of this comment: they are
    raised, as before, for the caller's fallback and the retries.
    """
    if isinstance(exc, gh_exc.NotFoundError):
        return True
    return (
        isinstance(exc, gh_exc.ForbiddenError)
        and not is_read_only(exc)
        and retry_delay(exc, 1, RetryPolicy(), 0.0) is None
    )


def by_author(comments: list[Any]) -> list[list[Any]]:
    """``comments`` grouped by author, oldest first, the first comment's author's group first."""
    groups: dict[str, list[Any]] = {}
    for comment in comments:
        groups.setdefault(str(comment.user.login), []).append(comment)
    return list(groups.values())


def _edit(group: list[Any], body: str, skip: set[int]) -> tuple[Any, CommentAction] | None:
    """Edit the newest of one author's comments; None, its ids added to ``skip``, if refused.

    The same body again is not sent ("unchanged"): a re-run job's verdict costs no edit.
    """
    keep, extras = group[-1], group[:-1]
    text = with_not_ours(body, skip)
    action: CommentAction = "unchanged"
    if keep.body != text:
        try:
            keep.edit(text)
        except gh_exc.GitHubException as exc:
            if not refused(exc):
                raise
            skip.update(c.id for c in group)  # one author: none of them is ours
            return None
        action = "updated"
    for extra in extras:  # a race left copies: heal it (an App may delete only its own)
        extra.delete()
    return keep, action


class CreateSent:
    """Whether an earlier try of one upsert sent its create, whose answer was lost.

    GitHub may have stored that comment: the retry then finds it, its body already ours, and
    it is the comment this upsert created, not one left unchanged.
    """

    def __init__(self) -> None:
        self.sent = False


def upsert_sticky(
    issue: Any, marked: list[Any], body: str, tries: CreateSent | None = None
) -> tuple[Any, CommentAction]:
    """Edit our comment among ``marked`` (by authors that may be us, oldest first), or post one.

    Args:
        issue: The github3 issue (the pull request) to post on.
        marked: Its comments opening with the marker whose author may be us.
        body: The comment, the marker its first line.
        tries: Shared by the retries of one upsert (``CreateSent``).

    Returns:
        (comment, "updated", "unchanged" or "created").
    """
    tries = tries or CreateSent()
    present = {c.id for c in marked}
    skip = {i for c in marked for i in not_ours(c.body)} & present
    known = set(skip)
    for group in by_author([c for c in marked if c.id not in skip]):
        edited = _edit(group, body, skip)
        if edited is not None:
            _warn_refused(skip - known, edited[0], "edited")
            landed = tries.sent and edited[1] == "unchanged"
            return (edited[0], "created") if landed else edited
    tries.sent = True
    comment = issue.create_comment(with_not_ours(body, skip))
    _warn_refused(skip - known, comment, "posted")
    return comment, "created"


def _warn_refused(ids: set[int], ours: Any, done: str) -> None:
    """One warning naming the marked comments whose edit GitHub refused, and what we did."""
    if ids:
        log.warning(
            "GitHub refused to edit comment %s, which opens with roofguard's marker "
            "(another App's copy, or deleted): %s comment %s instead",
            ", ".join(str(i) for i in sorted(ids)),
            done,
            getattr(ours, "id", None),
        )
