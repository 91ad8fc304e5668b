"""Store reads of runs: one run, a filtered page of runs, a run's record and findings.

``RunBase`` is the one family of run models: ``RunSummary`` (the store's) extends it, and
the API's ``RunPublic`` is validated from a summary, so a run's fields are declared once.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict, field_validator

from collectors.schema import RunRecord
from rules import Finding
from service.errors import NotFound
from service.store.baselines import BASELINE_KINDS
from service.store.coretables import DEVICES as _DEVICES
from service.store.coretables import FINDINGS as _FINDINGS
from service.store.coretables import REPOSITORIES as _REPOS
from service.store.coretables import RUNS as _RUNS
from service.store.ids import as_utc, same_repo
from service.store.runrecord import record_of
from service.store.sessions import StoreSession


class RunBase(BaseModel):
    """The fields every view of a stored run shares.

    Attributes:
        id: Run id.
        repo: OWNER/NAME.
        device: Device name the run is stored under.
        commit: Commit SHA.
        branch: Branch.
        pull_request: PR number, for pr runs.
        kind: nightly, pr or local.
        timestamp: When it was measured (UTC).
        runner: Runner name.
    """

    model_config = ConfigDict(frozen=True, from_attributes=True)

    id: int
    repo: str
    device: str
    commit: str | None
    branch: str | None
    pull_request: int | None
    kind: str
    timestamp: datetime
    runner: str | None


class RunSummary(RunBase):
    """A stored run without its record (cheap to list), read from a result row.

    Attributes:
        roof_source: datasheet, report, measured or custom.
        roof_label: The roof's label, e.g. "H100-SXM5 (datasheet)".
        trusted: False when the runner failed its health preflight.
        content_hash: The run's content hash (``service.store.ids.identity``).
        judged: False when its check judged nothing (no baseline yet, or one shorter than
            the gate needs); None when stored without a check (``ingest``): no verdict is
            stored for it.
    """

    roof_source: str
    roof_label: str
    trusted: bool
    content_hash: str
    judged: bool | None = None

    @field_validator("timestamp")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        """SQLite returns naive timestamps; every stored one is UTC."""
        return as_utc(value)


def _summary_select() -> sa.Select[Any]:
    return (
        sa.select(
            _RUNS.c.id,
            _REPOS.c.name.label("repo"),
            _DEVICES.c.name.label("device"),
            _RUNS.c.commit,
            _RUNS.c.branch,
            _RUNS.c.pull_request,
            _RUNS.c.kind,
            _RUNS.c.timestamp,
            _RUNS.c.runner,
            _RUNS.c.roof_source,
            _RUNS.c.roof_label,
            _RUNS.c.trusted,
            _RUNS.c.content_hash,
            _RUNS.c.judged,
        )
        .join(_REPOS, _REPOS.c.id == _RUNS.c.repo_id)
        .join(_DEVICES, _DEVICES.c.id == _RUNS.c.device_id)
    )


def get_run(*, session: StoreSession, run_id: int) -> RunSummary:
    """The run ``run_id``.

    Raises:
        NotFound: No such run.
    """
    row = session.execute(_summary_select().where(_RUNS.c.id == run_id)).first()
    if row is None:
        raise NotFound(f"run {run_id} is not in the history store")
    return RunSummary.model_validate(row)


def list_runs(
    *,
    session: StoreSession,
    repo: str | None = None,
    kind: str | None = None,
    branch: str | None = None,
    device: str | None = None,
    pull_request: int | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[RunSummary]:
    """Stored runs, newest first, filtered by whatever is given."""
    stmt = _summary_select()
    if repo is not None:
        stmt = stmt.where(same_repo(_REPOS.c.name, repo))
    filters = [
        (_RUNS.c.kind, kind),
        (_RUNS.c.branch, branch),
        (_DEVICES.c.name, device),
        (_RUNS.c.pull_request, pull_request),
    ]
    for column, value in filters:
        if value is not None:
            stmt = stmt.where(column == value)
    stmt = stmt.order_by(_RUNS.c.timestamp.desc(), _RUNS.c.id.desc()).limit(limit).offset(offset)
    return [RunSummary.model_validate(row) for row in session.execute(stmt)]


def runners_of(*, session: StoreSession, run_ids: Iterable[int]) -> dict[int, str]:
    """The runner that measured each of runs ``run_ids``, by run id (runs naming none left out).

    ``run_ids`` may repeat (a frame's column, one id a row): each run is asked for once.
    """
    ids = sorted({int(run_id) for run_id in run_ids})
    if not ids:
        return {}
    stmt = sa.select(_RUNS.c.id, _RUNS.c.runner).where(
        _RUNS.c.id.in_(ids), _RUNS.c.runner.is_not(None)
    )
    return {int(run_id): str(runner) for run_id, runner in session.execute(stmt)}


def nightly_setups(
    *, session: StoreSession, repo: str | None, device: str, until: datetime, limit: int
) -> list[tuple[str | None, str | None]]:
    """(runner, driver) of the newest ``limit`` nightly runs on ``device`` up to ``until``.

    Newest first; runs of every repository when ``repo`` is None.
    """
    stmt = (
        sa.select(_RUNS.c.runner, _RUNS.c.driver)
        .join(_DEVICES, _DEVICES.c.id == _RUNS.c.device_id)
        .where(
            _DEVICES.c.name == device, _RUNS.c.kind == "nightly", _RUNS.c.timestamp <= as_utc(until)
        )
    )
    if repo is not None:
        stmt = stmt.join(_REPOS, _REPOS.c.id == _RUNS.c.repo_id).where(
            same_repo(_REPOS.c.name, repo)
        )
    stmt = stmt.order_by(_RUNS.c.timestamp.desc(), _RUNS.c.id.desc()).limit(limit)
    return [(runner, driver) for runner, driver in session.execute(stmt)]


def first_nightly_elsewhere(
    *, session: StoreSession, repo: str, branch: str, device: str, after: datetime, until: datetime
) -> tuple[str, datetime] | None:
    """The device and time of ``branch``'s first nightly run elsewhere in ``(after, until]``.

    Where the nightly job went while ``device`` had no run (a runner on another card).
    """
    stmt = (
        sa.select(_DEVICES.c.name, _RUNS.c.timestamp)
        .join(_DEVICES, _DEVICES.c.id == _RUNS.c.device_id)
        .join(_REPOS, _REPOS.c.id == _RUNS.c.repo_id)
        .where(
            same_repo(_REPOS.c.name, repo),
            _RUNS.c.branch == branch,
            _RUNS.c.kind == "nightly",
            _DEVICES.c.name != device,
            _RUNS.c.timestamp > as_utc(after),
            _RUNS.c.timestamp <= as_utc(until),
        )
        .order_by(_RUNS.c.timestamp, _RUNS.c.id)
        .limit(1)
    )
    found = session.execute(stmt).first()
    return None if found is None else (str(found[0]), as_utc(found[1]))


def baseline_runs_by_branch(
    *, session: StoreSession, repo: str, device: str, before_run: int | None = None
) -> list[tuple[str, int]]:
    """(branch, runs) of ``repo``'s nightly and local runs on ``device``, most runs first.

    The runs that could be a baseline on some base branch; only those stored before run
    ``before_run`` when given (what that run's check could read). Runs with no branch are
    left out.
    """
    runs = sa.func.count(_RUNS.c.id)
    stmt = (
        sa.select(_RUNS.c.branch, runs)
        .join(_DEVICES, _DEVICES.c.id == _RUNS.c.device_id)
        .join(_REPOS, _REPOS.c.id == _RUNS.c.repo_id)
        .where(
            same_repo(_REPOS.c.name, repo),
            _DEVICES.c.name == device,
            _RUNS.c.kind.in_(BASELINE_KINDS),
            _RUNS.c.branch.is_not(None),
        )
        .group_by(_RUNS.c.branch)
        .order_by(runs.desc(), _RUNS.c.branch)
    )
    if before_run is not None:
        stmt = stmt.where(_RUNS.c.id < before_run)
    return [(str(branch), int(count)) for branch, count in session.execute(stmt)]


def run_judged(*, session: StoreSession, run_id: int) -> bool | None:
    """``RunSummary.judged`` of run ``run_id`` (None too for a run not stored)."""
    stmt = sa.select(_RUNS.c.judged).where(_RUNS.c.id == run_id)
    judged = session.execute(stmt).scalar()
    return None if judged is None else bool(judged)


def judged_config(*, session: StoreSession, run_id: int) -> str | None:
    """The digest of the configuration run ``run_id``'s stored verdict was judged with."""
    stmt = sa.select(_RUNS.c.judged_config).where(_RUNS.c.id == run_id)
    found = session.execute(stmt).scalar()
    return None if found is None else str(found)


def get_run_record(*, session: StoreSession, run_id: int) -> RunRecord:
    """The full RunRecord stored with run ``run_id`` (every verdict figure derives from it).

    Raises:
        NotFound: No such run.
    """
    stmt = sa.select(_RUNS.c.record_json, _RUNS.c.record_zlib).where(_RUNS.c.id == run_id)
    row = session.execute(stmt).first()
    if row is None:
        raise NotFound(f"run {run_id} is not in the history store")
    return RunRecord.model_validate_json(record_of(*row))


def list_findings(
    *, session: StoreSession, run_id: int, limit: int | None = None, offset: int = 0
) -> list[Finding]:
    """The stored findings of run ``run_id``, in the order they were saved (a page of them)."""
    stmt = (
        sa.select(_FINDINGS.c.finding_json)
        .where(_FINDINGS.c.run_id == run_id)
        .order_by(_FINDINGS.c.id)
        .limit(limit)
        .offset(offset)
    )
    return [Finding.model_validate(data) for data in session.execute(stmt).scalars()]
