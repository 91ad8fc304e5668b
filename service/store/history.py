"""SQL -> DataFrame: the single place where stored history becomes ``rules.frames`` frames.

Every frame has the columns of ``rules.frames.HISTORY_COLUMNS`` (plus ``repo`` and ``branch``),
oldest first. Reads go through SQLAlchemy Core in two narrow queries: the runs (a few hundred
rows, on the ``ix_runs_baseline`` index) and then their measurements (on the
``uq_measurements_run_kernel`` / ``ix_measurements_kernel_run`` indexes); the run columns are
joined in pandas, so no per-row ORM objects and no repeated run columns cross the driver.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

import pandas as pd
import sqlalchemy as sa
from sqlmodel import Session

from rules.frames import HISTORY_COLUMNS
from service.store.ids import as_utc, device_id, key_hash, repo_id
from service.store.repo import BASELINE_KINDS
from service.store.tables import BaselineAcceptance, Device, Kernel, Measurement, Repository, Run

_RUNS = Run.__table__  # type: ignore[attr-defined]
_MEAS = Measurement.__table__  # type: ignore[attr-defined]
_KERNELS = Kernel.__table__  # type: ignore[attr-defined]
_DEVICES = Device.__table__  # type: ignore[attr-defined]
_REPOS = Repository.__table__  # type: ignore[attr-defined]
_ACCEPT = BaselineAcceptance.__table__  # type: ignore[attr-defined]

#: Extra columns beside HISTORY_COLUMNS.
EXTRA_COLUMNS: tuple[str, ...] = ("repo", "branch")
COLUMNS: tuple[str, ...] = (*HISTORY_COLUMNS, *EXTRA_COLUMNS)
_RUN_COLUMNS = (
    "run_id",
    "commit",
    "timestamp",
    "kind",
    "device",
    "driver",
    "clock_control",
    "cache_control",
    "trusted",
    "repo",
    "branch",
)
_MEAS_COLUMNS = (
    "run_id",
    "kernel_key",
    "kernel_name",
    "roof_source",
    "percent_of_roof",
    "regime",
    "binding",
    "time_s",
    "total_flops",
    "bytes_dram",
    "bytes_l2",
    "bytes_l1",
)
_FLOAT_COLUMNS = ("percent_of_roof", "time_s", "total_flops", "bytes_dram", "bytes_l2", "bytes_l1")
_CHUNK = 5000


def _runs_select() -> sa.Select[Any]:
    return (
        sa.select(
            _RUNS.c.id.label("run_id"),
            _RUNS.c.commit,
            _RUNS.c.timestamp,
            _RUNS.c.kind,
            _DEVICES.c.name.label("device"),
            _RUNS.c.driver,
            _RUNS.c.clock_control,
            _RUNS.c.cache_control,
            _RUNS.c.trusted,
            _REPOS.c.name.label("repo"),
            _RUNS.c.branch,
        )
        .join(_DEVICES, _DEVICES.c.id == _RUNS.c.device_id)
        .join(_REPOS, _REPOS.c.id == _RUNS.c.repo_id)
    )


def _meas_select() -> sa.Select[Any]:
    m = _MEAS.c
    return sa.select(
        m.run_id,
        _KERNELS.c.key,
        _KERNELS.c.name,
        m.roof_source,
        m.percent_of_roof,
        m.regime,
        m.binding,
        m.time_s,
        m.total_flops,
        m.bytes_dram,
        m.bytes_l2,
        m.bytes_l1,
    ).join(_KERNELS, _KERNELS.c.id == m.kernel_id)


def _chunks(values: Sequence[int]) -> list[Sequence[int]]:
    return [values[i : i + _CHUNK] for i in range(0, len(values), _CHUNK)] or [[]]


def _measurements(
    session: Session, run_ids: Sequence[int], kernel_id_list: Sequence[int] | None
) -> list[Any]:
    """Measurement rows of ``run_ids`` (optionally only of ``kernel_id_list``)."""
    rows: list[Any] = []
    conn = session.connection()
    for chunk in _chunks(list(run_ids)):
        stmt = _meas_select().where(_MEAS.c.run_id.in_(chunk))
        if kernel_id_list is not None:
            for kchunk in _chunks(list(kernel_id_list)):
                rows.extend(conn.execute(stmt.where(_MEAS.c.kernel_id.in_(kchunk))).all())
        else:
            rows.extend(conn.execute(stmt).all())
    return rows


def _frame(run_rows: Sequence[Any], meas_rows: Sequence[Any]) -> pd.DataFrame:
    """Join run columns onto measurement rows; HISTORY_COLUMNS order, oldest first."""
    if not run_rows or not meas_rows:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in COLUMNS})
    runs = pd.DataFrame.from_records(run_rows, columns=list(_RUN_COLUMNS))
    runs["timestamp"] = pd.to_datetime([as_utc(t) for t in runs["timestamp"]], utc=True)
    runs["trusted"] = runs["trusted"].astype(bool)
    meas = pd.DataFrame.from_records(meas_rows, columns=list(_MEAS_COLUMNS))
    for column in _FLOAT_COLUMNS:
        meas[column] = pd.to_numeric(meas[column], errors="coerce").astype("float64")
    frame = meas.merge(runs, on="run_id", how="inner", validate="many_to_one")
    frame = frame.sort_values(["timestamp", "run_id"], kind="stable", ignore_index=True)
    return frame.loc[:, list(COLUMNS)]


def _cutoff(
    session: Session,
    base: sa.Select[Any],
    before_commit: str | None,
    before_timestamp: datetime | None,
) -> tuple[datetime | None, bool]:
    """Timestamp of the merge base's run (inclusive cut-off) and whether it was found."""
    if before_commit is None:
        return (as_utc(before_timestamp) if before_timestamp else None), True
    stmt = base.with_only_columns(sa.func.max(_RUNS.c.timestamp)).where(
        _RUNS.c.commit.startswith(before_commit, autoescape=True)
    )
    found = session.execute(stmt).scalar()
    if found is not None:
        return as_utc(found), True
    return (as_utc(before_timestamp) if before_timestamp else None), False


def _kernel_ids_for(session: Session, rid: int, keys: Collection[str]) -> list[int]:
    hashes = [key_hash(k) for k in keys]
    ids: list[int] = []
    for start in range(0, len(hashes), _CHUNK):
        stmt = sa.select(_KERNELS.c.id).where(
            _KERNELS.c.repo_id == rid, _KERNELS.c.key_hash.in_(hashes[start : start + _CHUNK])
        )
        ids.extend(int(i) for i in session.execute(stmt).scalars())
    return ids


def _drop_accepted(
    session: Session, frame: pd.DataFrame, rid: int, did: int | None
) -> pd.DataFrame:
    """Keep only rows measured after the latest acceptance of their kernel (on this device)."""
    stmt = (
        sa.select(_ACCEPT.c.kernel_key, sa.func.max(_ACCEPT.c.created_at))
        .where(_ACCEPT.c.repo_id == rid)
        .group_by(_ACCEPT.c.kernel_key)
    )
    devices = [_ACCEPT.c.device_id.is_(None)]
    if did is not None:
        devices.append(_ACCEPT.c.device_id == did)
    latest = {k: as_utc(t) for k, t in session.execute(stmt.where(sa.or_(*devices)))}
    if not latest or frame.empty:
        return frame
    accepted = frame["kernel_key"].map(latest)
    keep = accepted.isna() | (frame["timestamp"] > pd.to_datetime(accepted, utc=True))
    return frame.loc[keep].reset_index(drop=True)


def baseline_frame(
    *,
    session: Session,
    repo: str,
    device: str | None,
    roof_source: str | None,
    base_branch: str,
    window: int,
    before_commit: str | None = None,
    before_timestamp: datetime | None = None,
    kernel_keys: Collection[str] | None = None,
) -> pd.DataFrame:
    """The baseline history of a repository's kernels (HISTORY_COLUMNS, oldest first).

    The most recent ``window`` runs of ``base_branch`` of kind nightly or local (pull-request
    runs never become baseline) on ``device`` with ``roof_source`` (None: any). Given the PR's
    merge base ``before_commit`` (a full or abbreviated SHA), the baseline stops at that
    commit's run, inclusive; when no run of that commit is stored it stops at
    ``before_timestamp`` if given, and ``frame.attrs["merge_base_found"]`` is False. Rows of a
    kernel measured up to its latest ``accept_baseline`` are left out. Driver, clock and cache
    columns are included so the env-mismatch rule can compare like with like.

    ``frame.attrs`` holds ``runs`` (run ids in the window, oldest first), ``cutoff`` and
    ``merge_base_found``.
    """
    rid = repo_id(session=session, repo=repo)
    did = device_id(session=session, device=device) if device is not None else None
    unknown = rid is None or (device is not None and did is None)
    base = _runs_select().where(
        _RUNS.c.repo_id == rid, _RUNS.c.branch == base_branch, _RUNS.c.kind.in_(BASELINE_KINDS)
    )
    if did is not None:
        base = base.where(_RUNS.c.device_id == did)
    if roof_source is not None:
        base = base.where(_RUNS.c.roof_source == roof_source)
    cutoff, found = (
        (None, before_commit is None)
        if unknown
        else _cutoff(session, base, before_commit, before_timestamp)
    )
    if cutoff is not None:
        base = base.where(_RUNS.c.timestamp <= cutoff)
    recent = base.order_by(_RUNS.c.timestamp.desc(), _RUNS.c.id.desc()).limit(max(window, 0))
    run_rows = [] if unknown else session.connection().execute(recent).all()
    kernel_filter = None
    if kernel_keys is not None and rid is not None:
        kernel_filter = _kernel_ids_for(session, rid, kernel_keys)
    meas = _measurements(session, [r.run_id for r in run_rows], kernel_filter) if run_rows else []
    frame = _frame(run_rows, meas)
    if rid is not None:
        frame = _drop_accepted(session, frame, rid, did)
    frame.attrs.update(
        runs=[r.run_id for r in reversed(run_rows)], cutoff=cutoff, merge_base_found=found
    )
    return frame


def nightly_history(
    *,
    session: Session,
    repo: str | None,
    start: datetime,
    end: datetime,
    device: str | None = None,
    branch: str | None = None,
) -> pd.DataFrame:
    """Every nightly run's measurements in ``[start, end)`` (HISTORY_COLUMNS + repo, branch).

    For the weekly digest: ``repo`` None means every repository; ``device`` and ``branch``
    narrow it further. Reads only the needed columns, in chunks of runs.
    """
    stmt = _runs_select().where(
        _RUNS.c.kind == "nightly",
        _RUNS.c.timestamp >= as_utc(start),
        _RUNS.c.timestamp < as_utc(end),
    )
    for column, value in (
        (_REPOS.c.name, repo),
        (_DEVICES.c.name, device),
        (_RUNS.c.branch, branch),
    ):
        if value is not None:
            stmt = stmt.where(column == value)
    run_rows = session.connection().execute(stmt).all()
    meas = _measurements(session, [r.run_id for r in run_rows], None) if run_rows else []
    return _frame(run_rows, meas)


def kernel_history(
    *, session: Session, repo: str, key: str, device: str | None = None
) -> pd.DataFrame:
    """Every stored measurement of one kernel, all run kinds (filter on ``kind``), oldest first."""
    rid = repo_id(session=session, repo=repo)
    ids = _kernel_ids_for(session, rid, [key]) if rid is not None else []
    if not ids:
        return _frame([], [])
    conn = session.connection()
    meas = conn.execute(_meas_select().where(_MEAS.c.kernel_id == ids[0])).all()
    stmt = _runs_select().where(
        _RUNS.c.id.in_(sa.select(_MEAS.c.run_id).where(_MEAS.c.kernel_id == ids[0]))
    )
    if device is not None:
        stmt = stmt.where(_DEVICES.c.name == device)
    return _frame(conn.execute(stmt).all(), meas)
