"""What the service does with GitHub webhook events (signature checks are in webhook_auth).

* ``pull_request`` reopened or synchronize: the stored verdict of the PR's head commit is
  posted again (nothing happens until a runner has uploaded that commit).
* ``issue_comment`` created on a PR by a maintainer, ``/roofguard accept [kernel] -- reason``:
  the change is accepted as the new baseline of the kernel (or of every regressed kernel of
  the PR's latest run), recorded with who and why, and the verdict is posted again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlmodel import Session

from rules import Severity
from service.errors import BadInput
from service.github.commands import (
    MAINTAINER_ASSOCIATIONS,
    AcceptCommand,
    CommandSyntaxError,
    parse_accept,
)
from service.store.baselines import accept_baseline
from service.store.kernelnames import matching_keys
from service.store.lookups import latest_run_for
from service.store.queries import get_run, get_run_record, list_findings


@dataclass(frozen=True)
class WebhookAction:
    """What an event asks for.

    Attributes:
        outcome: ignored, no-run, repost or accepted.
        detail: Why, in words (returned to GitHub, shown in the delivery log).
        repo: OWNER/NAME.
        pr: The pull request.
        sha: The commit the verdict is posted on.
        run_id: The stored run the verdict is of.
    """

    outcome: str
    detail: str
    repo: str | None = None
    pr: int | None = None
    sha: str | None = None
    run_id: int | None = None


def _ignored(detail: str) -> WebhookAction:
    return WebhookAction("ignored", detail)


def field(payload: Any, *path: str, kind: type = str) -> Any:
    """``payload[path[0]][path[1]]...``, of type ``kind`` (``int``: a positive number).

    Raises:
        BadInput: A key is missing or the value has another type (names the dotted path).
    """
    value = payload
    for depth, key in enumerate(path):
        if not isinstance(value, dict) or key not in value:
            raise BadInput(f"webhook payload: {'.'.join(path[: depth + 1])} is missing")
        value = value[key]
    wanted = isinstance(value, kind) and not isinstance(value, bool)
    if not wanted or (kind is int and not 0 < value < 2**31) or (kind is str and not value):
        raise BadInput(f"webhook payload: {'.'.join(path)} is not a {kind.__name__}")
    return value


def _text(payload: dict[str, Any], *path: str) -> str:
    """An optional text field: empty when missing or not a string."""
    value: Any = payload
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, str) else ""


#: The events roofguard acts on; any other is answered "ignored" before anything is read.
HANDLED_EVENTS = frozenset({"pull_request", "issue_comment"})


def ignored_event(event: str) -> WebhookAction | None:
    """The answer to an event roofguard does not act on (None: it may act on it)."""
    return None if event in HANDLED_EVENTS else _ignored(f"event {event!r} is not handled")


def plan(*, session: Session, event: str, payload: dict[str, Any]) -> WebhookAction:
    """Decide (and, for an accept, record) what an event does; posting is the caller's."""
    unhandled = ignored_event(event)
    if unhandled is not None:
        return unhandled
    if not isinstance(payload.get("repository"), dict):
        return _ignored("payload names no repository")
    repo = field(payload, "repository", "full_name")
    if event == "pull_request":
        return _pull_request(session, repo, payload)
    return _comment(session, repo, payload)


def _pull_request(session: Session, repo: str, payload: dict[str, Any]) -> WebhookAction:
    action = payload.get("action")
    if action not in ("reopened", "synchronize"):
        return _ignored(f"pull_request action {action!r} is not handled")
    sha = field(payload, "pull_request", "head", "sha")
    number = field(payload, "pull_request", "number", kind=int)
    run_id = latest_run_for(session=session, repo=repo, commit=sha)
    if run_id is None:
        return WebhookAction("no-run", f"no run uploaded for {sha[:12]} yet", repo, number, sha)
    return WebhookAction(
        "repost", f"verdict of run {run_id} to be posted again", repo, number, sha, run_id
    )


def _comment(session: Session, repo: str, payload: dict[str, Any]) -> WebhookAction:
    issue = payload.get("issue")
    on_pr = isinstance(issue, dict) and "pull_request" in issue
    if payload.get("action") != "created" or not on_pr:
        return _ignored("only new comments on pull requests are read")
    asked = _maintainer_command(payload)
    if isinstance(asked, WebhookAction):
        return asked
    command, login = asked
    number = field(payload, "issue", "number", kind=int)
    run_id = latest_run_for(session=session, repo=repo, pull_request=number)
    if run_id is None:
        return WebhookAction("no-run", f"no run uploaded for PR #{number}", repo, number)
    return _accept(session, repo, number, run_id, command, login)


def _maintainer_command(payload: dict[str, Any]) -> tuple[AcceptCommand, str] | WebhookAction:
    """The comment's ``/roofguard accept`` and its author, or why it is ignored."""
    try:
        command = parse_accept(_text(payload, "comment", "body"))
    except CommandSyntaxError as exc:
        return _ignored(str(exc))
    if command is None:
        return _ignored("no /roofguard command in the comment")
    login = field(payload, "comment", "user", "login")
    if _text(payload, "comment", "author_association") not in MAINTAINER_ASSOCIATIONS:
        return _ignored(f"{login} is not a maintainer (OWNER, MEMBER or COLLABORATOR)")
    return command, login


def _accept(
    session: Session, repo: str, number: int, run_id: int, command: AcceptCommand, login: str
) -> WebhookAction:
    """Accept the run's regressed kernels (or the one the command names) as new baseline."""
    keys = _kernels_to_accept(session, run_id, command.kernel)
    if not keys:
        return _ignored(
            f"nothing to accept in run {run_id}: no kernel {command.kernel!r} or no regression"
        )
    run = get_run(session=session, run_id=run_id)
    for key in keys:
        accept_baseline(
            session=session,
            repo=repo,
            kernel_key=key,
            device=run.device,
            accepted_by=login,
            reason=command.reason,
            run_id=run_id,
        )
    return WebhookAction(
        "accepted",
        f"{login} accepted {len(keys)} kernel(s) of run {run_id}",
        repo,
        number,
        run.commit,
        run_id,
    )


def _kernels_to_accept(session: Session, run_id: int, kernel: str | None) -> list[str]:
    """The named kernel if the run has it, else every kernel with a counting failure."""
    if kernel is not None:
        record = get_run_record(session=session, run_id=run_id)
        return matching_keys(kernel, ((k.key, k.name) for k in record.kernels))[:1]
    failing = {
        f.kernel
        for f in list_findings(session=session, run_id=run_id)
        if f.kernel and f.severity == Severity.FAIL and f.counts
    }
    return sorted(failing)
