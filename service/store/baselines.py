"""Which runs may be baseline, which baseline a check asks for, and ``/roofguard accept``.

``service.store.history.read_baseline`` reads the baseline these define.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, NamedTuple

import pandas as pd
import sqlalchemy as sa

from collectors.schema import RunKind
from service.store.claims import forget_answers
from service.store.coretables import BASELINE_ACCEPTANCES as _ACCEPTANCES
from service.store.coretables import DEVICES as _DEVICES
from service.store.ids import as_utc, device_id, insert_skipping_conflicts, key_hash, repo_id
from service.store.rows import AcceptanceValues
from service.store.sessions import StoreSession

#: Run kinds that may become a baseline (pull-request runs never do).
BASELINE_KINDS: tuple[str, ...] = (RunKind.NIGHTLY.value, RunKind.LOCAL.value)


@dataclass(frozen=True)
class MergeBase:
    """Where a PR's baseline stops: its merge base, and that commit's time when known.

    Attributes:
        sha: The commit (full or abbreviated): the baseline stops at its stored run.
        time: Its commit time (``git log -1 --format=%cI SHA``): where the baseline stops
            when no run of ``sha`` is stored. None: it then runs to the newest nights.
    """

    sha: str
    time: datetime | None = None


@dataclass(frozen=True)
class Acceptance:
    """A ``/roofguard accept`` as a verdict names it.

    Attributes:
        kernel_key: The accepted kernel's identity key.
        accepted_by: Who accepted it.
        reason: Why, as written in the comment.
        run_id: The run whose change was accepted, when known.
        accepted_at: When: the kernel's baseline restarts after it.
    """

    kernel_key: str
    accepted_by: str
    reason: str
    run_id: int | None = None
    accepted_at: datetime | None = None


@dataclass(frozen=True)
class BaselineQuery:
    """Which baseline ``read_baseline`` reads.

    Attributes:
        repo: OWNER/NAME.
        device: The device the runs were stored under; None: any.
        roof_source: The roof the runs were placed on; None: any.
        base_branch: The branch whose runs are baseline.
        window: How many of its most recent runs.
        before_commit: The PR's merge base (full or abbreviated SHA): the baseline stops at
            that commit's run, inclusive.
        before_timestamp: Where the baseline stops when no run of ``before_commit`` is stored.
        kernel_keys: Only these kernels; None: every kernel.
        full_runs: Only the newest this many runs carry every measurement column; the
            older ones carry ``history.GATE_COLUMNS`` (a check reads the gate's longer window for
            those alone), their other measurement columns missing. None: every run.
        keep_columns: Keep the columns of runs read from their rows
            (``service.store.columnar``): for a caller that writes in this transaction
            anyway (a check storing a new run); a reader never writes.
        up_to_run: Only runs stored up to this run id, itself included (the caller leaves it
            out, so its window counts as it did when the run was new): a run judged again
            (its page, the same upload again) reads the baseline it was judged against, not
            the nights stored since. None: every run.
        accepted_until: Only acceptances made by then (the judged run's measurement): a run
            measured before a ``/roofguard accept`` keeps the baseline it was judged against
            when judged again. None: every acceptance.
    """

    repo: str
    device: str | None
    roof_source: str | None
    base_branch: str
    window: int
    before_commit: str | None = None
    before_timestamp: datetime | None = None
    kernel_keys: Collection[str] | None = None
    full_runs: int | None = None
    keep_columns: bool = False
    up_to_run: int | None = None
    accepted_until: datetime | None = None


@dataclass(frozen=True)
class Baseline:
    """A baseline as read: its rows, and the runs they come from.

    Attributes:
        frame: The rows (``history.COLUMNS``), oldest first.
        runs: Run ids in the window, oldest first (a run of the window may hold no row of the
            kernels asked for).
        cutoff: The timestamp the baseline stops at (inclusive), if any.
        merge_base_found: False when the PR's merge base has no stored run (the baseline then
            stops at ``before_timestamp``).
        up_to_run: The query's ``up_to_run``: another card's history read beside this one
            stops there too.
        restarted: The kernels whose baseline restarted after a ``/roofguard accept`` within
            the history read, with that acceptance, by key (``after_acceptances``).
        after_merge_base: The merge base was measured on another card only and this card has
            no run up to it: the runs are this card's nearest after it, not up to ``cutoff``.
    """

    frame: pd.DataFrame
    runs: tuple[int, ...] = ()
    cutoff: datetime | None = None
    merge_base_found: bool = True
    up_to_run: int | None = None
    restarted: Mapping[str, Acceptance] = field(default_factory=dict)
    after_merge_base: bool = False

    def newest(self, count: int) -> Baseline:
        """The rows of the ``count`` newest runs of the window."""
        if len(self.runs) <= count:
            return self
        kept = self.runs[-count:]
        rows = self.frame[self.frame["run_id"].isin(kept)]
        return replace(self, frame=rows, runs=kept)

    def without_run(self, run_id: int) -> Baseline:
        """The rows of every run but ``run_id`` (the window's runs are counted as read)."""
        return replace(self, frame=self.frame[self.frame["run_id"] != run_id])


class Recorded(NamedTuple):
    """An acceptance as ``accept_baseline`` left it: its id, and whether it was recorded now."""

    id: int
    created: bool


def accept_baseline(
    *,
    session: StoreSession,
    repo: str,
    kernel_key: str,
    device: str | None,
    accepted_by: str,
    reason: str = "",
    run_id: int | None = None,
    accepted_at: datetime | None = None,
) -> Recorded:
    """Record a ``/roofguard accept``: the kernel's baseline restarts after ``accepted_at``.

    Args:
        session: The session.
        repo: OWNER/NAME.
        kernel_key: Identity key of the accepted kernel.
        device: Device name it applies to; None for every device.
        accepted_by: Who accepted (GitHub login).
        reason: Why, as written in the comment.
        run_id: The run whose change was accepted, when known: a change is accepted once (the
            same accept again, even at once, records nothing, nor restarts the baseline later:
            it answers the first's id, ``uq_acceptances_run``).
        accepted_at: When (default: now); baselines use runs measured after it.
    """
    rid = repo_id(session=session, repo=repo, create=True)
    did = device_id(session=session, device=device, create=True) if device else None
    assert rid is not None  # created above
    before = _accepted_before(session, (rid, did), kernel_key, run_id)
    if before is not None:
        return Recorded(before, False)
    row: AcceptanceValues = {
        "repo_id": rid,
        "device_id": did,
        "kernel_key": kernel_key,
        "kernel_key_hash": key_hash(kernel_key),
        "run_id": run_id,
        "accepted_by": accepted_by,
        "reason": reason,
        "created_at": as_utc(accepted_at or datetime.now(UTC)),
    }
    inserted = _insert_once(session, row)
    if inserted is None:  # the same accept, stored at once by another transaction
        first = _accepted_before(session, (rid, did), kernel_key, run_id)
        assert first is not None  # the row the insert collided with
        return Recorded(first, False)
    if run_id is not None:  # its verdict now says accepted: an answer given before does not
        forget_answers(session, run_id)
    return Recorded(inserted, True)


def _insert_once(session: StoreSession, row: AcceptanceValues) -> int | None:
    """Insert the acceptance ``row``; its id, or None when ``uq_acceptances_run`` holds it.

    Two deliveries of one accept at once each found none before: the unique index decides
    (PostgreSQL makes the second insert wait for the first's commit, then skip it).
    """
    stmt = insert_skipping_conflicts(session, _ACCEPTANCES).returning(_ACCEPTANCES.c.id)
    found = session.execute(stmt, row).scalar()
    return None if found is None else int(found)


def _accepted_before(
    session: StoreSession, where: tuple[int, int | None], kernel_key: str, run_id: int | None
) -> int | None:
    """The id of the acceptance of ``kernel_key`` in run ``run_id`` on that device, if any."""
    if run_id is None:
        return None
    a = _ACCEPTANCES.c
    rid, did = where
    same_device = a.device_id.is_(None) if did is None else a.device_id == did
    stmt = sa.select(sa.func.min(a.id)).where(
        a.repo_id == rid, same_device, a.kernel_key_hash == key_hash(kernel_key), a.run_id == run_id
    )
    found = session.execute(stmt).scalar()
    return None if found is None else int(found)


def acceptances_at(*, session: StoreSession, run_id: int) -> list[Acceptance]:
    """The acceptances made of run ``run_id``'s changes, oldest first."""
    cols = _ACCEPTANCES.c
    stmt = (
        sa.select(cols.kernel_key, cols.accepted_by, cols.reason, cols.run_id, cols.created_at)
        .where(cols.run_id == run_id)
        .order_by(cols.id)
    )
    return [
        Acceptance(k, by, why, run, as_utc(at)) for k, by, why, run, at in session.execute(stmt)
    ]


def latest_acceptances(
    *, session: StoreSession, rid: int, did: int | None, until: datetime | None = None
) -> dict[str, Acceptance]:
    """The latest ``/roofguard accept`` of each kernel on device ``did`` or every device.

    ``did`` None: of any device; ``until``: made by then. A work model's edit is no
    acceptance here: its rows are kept, and judged on the new model's work
    (``service.pipeline.workchange``).
    """
    a = _ACCEPTANCES.c
    columns = (a.kernel_key, a.accepted_by, a.reason, a.run_id, a.created_at)
    stmt = _maintainers(columns, until).where(a.repo_id == rid)
    if did is not None:  # acceptances for this device or for every device
        stmt = stmt.where(sa.or_(a.device_id.is_(None), a.device_id == did))
    rows = session.execute(stmt)  # oldest first: each kernel's latest is kept
    return {k: Acceptance(k, by, why, run, as_utc(at)) for k, by, why, run, at in rows}


def _maintainers(
    columns: Sequence[sa.ColumnElement[Any]], until: datetime | None
) -> sa.Select[Any]:
    """``columns`` of the ``/roofguard accept`` rows made by ``until``, oldest first.

    A work model's edit is recorded as an acceptance too (``record_edits``) but is none: its
    nights are kept and judged on the new model's work (``service.pipeline.workchange``).
    """
    a = _ACCEPTANCES.c
    stmt = sa.select(*columns).where(sa.not_(is_work_model_edit())).order_by(a.created_at, a.id)
    return stmt if until is None else stmt.where(a.created_at <= as_utc(until))


def after_acceptances(
    session: StoreSession,
    frame: pd.DataFrame,
    where: tuple[int, int | None],
    span: tuple[datetime | None, datetime | None],
) -> tuple[pd.DataFrame, dict[str, Acceptance]]:
    """``frame``'s rows measured after their kernel's latest acceptance, and the restarted.

    ``where``: the repository's and device's ids (``latest_acceptances``); ``span``: the
    oldest run read (None: the read reached the card's first run) and the time acceptances
    count until (``BaselineQuery.accepted_until``). A kernel restarted when its latest
    acceptance lies within the history read: its card's history is then too short because a
    maintainer restarted it, not because the kernel is young on the card.
    """
    since, until = span
    latest = latest_acceptances(session=session, rid=where[0], did=where[1], until=until)
    restarted = {
        key: accepted
        for key, accepted in latest.items()
        if since is None or (accepted.accepted_at is not None and accepted.accepted_at > since)
    }
    if not latest or frame.empty:
        return frame, restarted
    cut = frame["kernel_key"].map({k: a.accepted_at for k, a in latest.items()})
    keep = cut.isna() | (frame["timestamp"] > pd.to_datetime(cut, utc=True))
    return frame.loc[keep].reset_index(drop=True), restarted


#: Who records a declared work model's edit (``service.pipeline.workchange``), and why.
EDITS_RECORDED_BY = "roofguard"
EDIT_REASON = "work model changed"


def is_work_model_edit() -> sa.ColumnElement[bool]:
    """Whether an acceptance row records a work model's edit, not a ``/roofguard accept``."""
    a = _ACCEPTANCES.c
    return sa.and_(
        a.accepted_by == EDITS_RECORDED_BY, a.reason.startswith(EDIT_REASON, autoescape=True)
    )


def work_model_edits(*, session: StoreSession, repo: str) -> list[tuple[str, str | None, datetime]]:
    """(kernel key, device or None, when) of each work model edit recorded in ``repo``."""
    rid = repo_id(session=session, repo=repo)
    if rid is None:
        return []
    a = _ACCEPTANCES.c
    stmt = (
        sa.select(a.kernel_key, _DEVICES.c.name, a.created_at)
        .select_from(_ACCEPTANCES.outerjoin(_DEVICES, _DEVICES.c.id == a.device_id))
        .where(a.repo_id == rid, is_work_model_edit())
    )
    return [(str(k), d, as_utc(t)) for k, d, t in session.execute(stmt)]


def latest_edits(
    edits: Iterable[tuple[str, str | None, datetime]], device: str
) -> dict[str, datetime]:
    """Each kernel's latest work model edit (``work_model_edits``) on ``device`` or every card."""
    latest: dict[str, datetime] = {}
    for key, on, when in edits:
        if on in (None, device):
            latest[key] = max(when, latest.get(key, when))
    return latest


def maintainer_acceptances(
    *, session: StoreSession, repo: str | None, until: datetime | None = None
) -> list[tuple[str, str | None, datetime, str, str]]:
    """(kernel key, device or None, when, who, why) of each ``/roofguard accept``, oldest first.

    Of ``repo`` (None: of every repository), made by ``until`` when given: the acceptances
    the baseline reads (``latest_acceptances``), a work model's edit left out.
    """
    a = _ACCEPTANCES.c
    columns = (a.kernel_key, _DEVICES.c.name, a.created_at, a.accepted_by, a.reason)
    stmt = _maintainers(columns, until).select_from(
        _ACCEPTANCES.outerjoin(_DEVICES, _DEVICES.c.id == a.device_id)
    )
    if repo is not None:
        rid = repo_id(session=session, repo=repo)
        if rid is None:
            return []
        stmt = stmt.where(a.repo_id == rid)
    return [
        (str(k), d, as_utc(t), str(by), str(why or ""))
        for k, d, t, by, why in session.execute(stmt)
    ]
