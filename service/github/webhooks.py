"""What the service does with GitHub webhook events (signature checks are in webhook_auth).

* ``pull_request`` reopened or synchronize: the stored verdict of the PR's head commit is
  posted again, of its newest run on each card (nothing happens until a runner has uploaded
  that commit).
* ``issue_comment`` created on a PR by a maintainer, ``/roofguard accept [kernel] -- reason``:
  the change is accepted as the new baseline of every kernel that regressed in the PR's
  newest run on each card (or of the kernel named, on each card where it regressed), on that
  card, recorded with who and why, and each of those cards' verdicts is posted again. A PR
  checked on two cards has two verdicts: the card uploaded last is not the only one.
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
from service.store.baselines import accept_baseline, acceptances_at
from service.store.kernelnames import matching_keys
from service.store.lookups import latest_runs_for
from service.store.queries import RunSummary, get_run, get_run_record, list_findings

#: Kernels named in an answer, per card; the rest are counted.
NAMED = 5


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
        also: (run id, commit) of each other card's verdict posted too.
    """

    outcome: str
    detail: str
    repo: str | None = None
    pr: int | None = None
    sha: str | None = None
    run_id: int | None = None
    also: tuple[tuple[int, str | None], ...] = ()

    @property
    def posts(self) -> tuple[tuple[int, str | None], ...]:
        """(run id, commit) of every verdict to post: one per card."""
        return () if self.run_id is None else ((self.run_id, self.sha), *self.also)


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
    run_ids = latest_runs_for(session=session, repo=repo, commit=sha)
    if not run_ids:
        return WebhookAction("no-run", f"no run uploaded for {sha[:12]} yet", repo, number, sha)
    which = (
        f"verdict of run {run_ids[0]}"
        if len(run_ids) == 1
        else f"verdicts of runs {', '.join(map(str, run_ids))} (one per card)"
    )
    also = tuple((run_id, sha) for run_id in run_ids[1:])
    return WebhookAction(
        "repost", f"{which} to be posted again", repo, number, sha, run_ids[0], also
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
    run_ids = latest_runs_for(session=session, repo=repo, pull_request=number)
    if not run_ids:
        return WebhookAction("no-run", f"no run uploaded for PR #{number}", repo, number)
    runs = [get_run(session=session, run_id=run_id) for run_id in run_ids]
    return _accept(session, (repo, number), runs, command, login)


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
    session: Session,
    where: tuple[str, int],
    runs: list[RunSummary],
    command: AcceptCommand,
    login: str,
) -> WebhookAction:
    """Accept, on each card, what regressed in its newest run of the PR (or the kernel named).

    ``where``: the repository and the PR. The same accept again records nothing new.
    """
    repo, number = where
    chosen = _kernels_to_accept(session, [run.id for run in runs], command.kernel)
    picked = [(run, chosen[run.id]) for run in runs if chosen.get(run.id)]
    if not picked:
        return _ignored(_nothing_to_accept(number, runs, command.kernel))
    new: list[str] = []
    before: list[str] = []
    for run, keys in picked:
        created = _record(session, repo, run, keys, (command, login))
        new += [_on_card(created, run)] if created else []
        old = [key for key in keys if key not in created]
        before += [_on_card(old, run)] if old else []
    said = f"{login} accepted {'; '.join(new)}" if new else f"nothing new accepted by {login}"
    detail = said + (f"; already accepted: {'; '.join(before)}" if before else "")
    (first, _), others = picked[0], picked[1:]
    also = tuple((run.id, run.commit) for run, _ in others)
    return WebhookAction("accepted", detail, repo, number, first.commit, first.id, also)


def _record(
    session: Session,
    repo: str,
    run: RunSummary,
    keys: list[str],
    asked: tuple[AcceptCommand, str],
) -> list[str]:
    """Accept ``keys`` on ``run``'s card (``asked``: the command and who); those new."""
    command, login = asked
    return [
        key
        for key in keys
        if accept_baseline(
            session=session,
            repo=repo,
            kernel_key=key,
            device=run.device,
            accepted_by=login,
            reason=command.reason,
            run_id=run.id,
        ).created
    ]


def _on_card(keys: list[str], run: RunSummary) -> str:
    """``'gemv', 'gemm' on H100-SXM5 (run 45)``: at most ``NAMED`` named, the rest counted."""
    named = ", ".join(repr(key) for key in keys[:NAMED])
    more = f" and {len(keys) - NAMED} more" if len(keys) > NAMED else ""
    return f"{named}{more} on {run.device} (run {run.id})"


def _nothing_to_accept(number: int, runs: list[RunSummary], kernel: str | None) -> str:
    """Why an accept found nothing: no kernel (or not the one named) regressed, in which runs."""
    newest = ", ".join(f"run {run.id} on {run.device}" for run in runs)
    what = "no kernel" if kernel is None else f"no kernel {kernel!r}"
    return (
        f"nothing to accept in PR #{number}: {what} regressed in its newest run on any card "
        f"({newest})"
    )


def _kernels_to_accept(
    session: Session, run_ids: list[int], kernel: str | None
) -> dict[int, list[str]]:
    """The kernels to accept in each run: every one failing, or the named one where it regressed.

    Regressed: a finding that counts, failing or (unconfirmed) suspect. A kernel already
    accepted of the run stays chosen: the same accept again is answered "already accepted".
    """
    chosen: dict[int, list[str]] = {}
    wanted = (Severity.FAIL,) if kernel is None else (Severity.FAIL, Severity.WARN)
    for run_id in run_ids:
        regressed = {
            f.kernel
            for f in list_findings(session=session, run_id=run_id)
            if f.kernel and f.counts and f.severity in wanted
        }
        regressed |= {a.kernel_key for a in acceptances_at(session=session, run_id=run_id)}
        if kernel is not None:
            record = get_run_record(session=session, run_id=run_id)
            named = matching_keys(kernel, ((k.key, k.name) for k in record.kernels))[:1]
            regressed &= set(named)
        chosen[run_id] = sorted(regressed)
    return chosen
