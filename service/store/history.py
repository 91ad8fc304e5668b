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

import numpy as np
import pandas as pd
import sqlalchemy as sa

from rules import HISTORY_COLUMNS
from service.store.baselines import BASELINE_KINDS, after_acceptances
from service.store.baselines import Baseline as Baseline
from service.store.baselines import BaselineQuery as BaselineQuery
from service.store.baselines import MergeBase as MergeBase
from service.store.columnar import Columns, columns_of, frame_of, load_columns, save_columns
from service.store.coretables import DEVICES as _DEVICES
from service.store.coretables import KERNELS as _KERNELS
from service.store.coretables import MEASUREMENTS as _MEAS
from service.store.coretables import REPOSITORIES as _REPOS
from service.store.coretables import RUNS as _RUNS
from service.store.fastread import one_of, raw_rows, read_frame
from service.store.ids import as_utc, device_id, key_hash, repo_id, same_repo
from service.store.kernelnames import resolve_kernel_key
from service.store.sessions import StoreSession

#: Extra columns beside HISTORY_COLUMNS.
EXTRA_COLUMNS: tuple[str, ...] = ("repo", "branch")
COLUMNS: tuple[str, ...] = (*HISTORY_COLUMNS, *EXTRA_COLUMNS)
_RUN_COLUMNS = (
    "run_id",
    "commit",
    "timestamp",
    "kind",
    "device",
    "roof_source",
    "driver",
    "clock_control",
    "cache_control",
    "trusted",
    "repo",
    "branch",
)
_MEAS_COLUMNS = (
    "run_id",
    "kernel_id",
    "percent_of_roof",
    "regime",
    "binding",
    "time_s",
    "total_flops",
    "bytes_dram",
    "bytes_l2",
    "bytes_l1",
    "peak_flop_time_s",
)
_FLOAT_COLUMNS = (
    "percent_of_roof",
    "time_s",
    "total_flops",
    "bytes_dram",
    "bytes_l2",
    "bytes_l1",
    "peak_flop_time_s",
)
#: What the gate reads of the runs older than the baseline's window (``full_runs``): fetching
#: 5 of the 11 columns for them makes a 2,000-kernel check's 60-run read about 0.2 s cheaper.
GATE_COLUMNS = ("run_id", "kernel_id", "percent_of_roof", "time_s", "total_flops")
#: Up to this many kernels are filtered in SQL; more are filtered in pandas (cheaper than
#: thousands of bound parameters).
_SQL_KERNEL_FILTER = 500
_CHUNK = 5000


def _runs_select() -> sa.Select[Any]:
    r = _RUNS.c
    return (
        sa.select(
            r.id.label("run_id"),
            r.commit,
            r.timestamp,
            r.kind,
            _DEVICES.c.name.label("device"),
            r.roof_source,
            r.driver,
            r.clock_control,
            r.cache_control,
            r.trusted,
            _REPOS.c.name.label("repo"),
            r.branch,
        )
        .join(_DEVICES, _DEVICES.c.id == r.device_id)
        .join(_REPOS, _REPOS.c.id == r.repo_id)
    )


def _meas_select(columns: Sequence[str] = _MEAS_COLUMNS) -> sa.Select[Any]:
    return sa.select(*(_MEAS.c[c] for c in columns))


def _chunks(values: Sequence[int]) -> list[Sequence[int]]:
    return [values[i : i + _CHUNK] for i in range(0, len(values), _CHUNK)]


def _measurements(
    session: StoreSession,
    run_ids: Sequence[int],
    kernel_id_list: Collection[int] | None,
    full_runs: int | None = None,
    *,
    as_columns: bool = False,
    keep_columns: bool = False,
) -> pd.DataFrame:
    """Measurements of ``run_ids`` (newest first), only of ``kernel_id_list`` when given.

    Every column of the first ``full_runs`` runs (None: of all), ``GATE_COLUMNS`` of the
    others; their other columns are missing (NaN). ``as_columns``: read the runs' stored
    columns (``service.store.columnar``), the rows of those that have none (and keep their
    columns when ``keep_columns``); a filter of a few kernels reads their rows instead.
    """
    full = len(run_ids) if full_runs is None else full_runs
    in_sql = kernel_id_list is not None and len(kernel_id_list) <= _SQL_KERNEL_FILTER
    kernels = sorted(kernel_id_list) if in_sql and kernel_id_list is not None else None
    if as_columns and not in_sql:
        stored = _run_columns(session, run_ids, keep=keep_columns)
        newest, older = run_ids[:full], run_ids[full:]
        parts = [
            *([frame_of(newest, stored, _MEAS_COLUMNS)] if newest else []),
            *([frame_of(older, stored, GATE_COLUMNS)] if older else []),
        ]
    else:
        parts = [
            *_read_runs(session, run_ids[:full], _MEAS_COLUMNS, kernels),
            *_read_runs(session, run_ids[full:], GATE_COLUMNS, kernels),
        ]
    meas = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    if kernel_id_list is not None and not in_sql:
        meas = meas.loc[meas["kernel_id"].isin(list(kernel_id_list))]
    return meas.reindex(columns=list(_MEAS_COLUMNS))


def _run_columns(
    session: StoreSession, run_ids: Sequence[int], *, keep: bool
) -> dict[int, Columns]:
    """Every run's columns: those stored, and the others' from their rows (kept if ``keep``)."""
    stored = load_columns(session, run_ids)
    missing = [r for r in run_ids if r not in stored]
    if missing:
        parts = _read_runs(session, missing, _MEAS_COLUMNS, None)
        rows = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
        fresh = columns_of(rows)
        if keep:
            save_columns(session, fresh)
        stored.update(fresh)
    return stored


def _read_runs(
    session: StoreSession, run_ids: Sequence[int], columns: Sequence[str], kernels: list[int] | None
) -> list[pd.DataFrame]:
    """``columns`` of the measurements of ``run_ids`` (of ``kernels`` only, when given)."""
    conn = session.connection()
    floats = [c for c in columns if c in _FLOAT_COLUMNS]
    parts = []
    for chunk in _chunks(list(run_ids)):
        stmt = _meas_select(columns).where(_MEAS.c.run_id.in_(chunk))
        if kernels is not None:
            stmt = stmt.where(_MEAS.c.kernel_id.in_(kernels))
        parts.append(read_frame(conn, stmt, columns, floats))
    return parts


def _kernels(session: StoreSession, kernel_id_list: Collection[int]) -> pd.DataFrame:
    """kernel_id -> kernel_key, kernel_name for the given ids."""
    rows: list[tuple[Any, ...]] = []
    conn = session.connection()
    for chunk in _chunks(sorted(kernel_id_list)):
        stmt = sa.select(_KERNELS.c.id, _KERNELS.c.key, _KERNELS.c.name)
        rows.extend(raw_rows(conn, stmt.where(one_of(conn, _KERNELS.c.id, chunk))))
    return pd.DataFrame(rows, columns=["kernel_id", "kernel_key", "kernel_name"])


def _empty() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype="object") for c in COLUMNS})


def _frame(
    session: StoreSession, run_rows: Sequence[Any], meas: pd.DataFrame | None
) -> pd.DataFrame:
    """Join run and kernel columns onto measurements; COLUMNS order, oldest first.

    Oldest first is (timestamp, run_id, kernel_id): the measurements are put in that order
    by one ``np.lexsort`` of two integer arrays (the run's rank, the kernel), and the inner
    merges keep it, cheaper than sorting the joined frame on three keys.
    """
    if not run_rows or meas is None or meas.empty:
        return _empty()
    runs = pd.DataFrame([tuple(r) for r in run_rows], columns=list(_RUN_COLUMNS))
    runs["timestamp"] = pd.to_datetime([as_utc(t) for t in runs["timestamp"]], utc=True)
    runs["trusted"] = runs["trusted"].astype(bool)
    runs = runs.sort_values(["timestamp", "run_id"], ignore_index=True)  # rank = position
    kernels = _kernels(session, set(meas["kernel_id"].unique().tolist()))
    rank = pd.Index(runs["run_id"]).get_indexer(meas["run_id"])
    meas = meas.take(np.lexsort((meas["kernel_id"].to_numpy(), rank)))
    frame = meas.merge(runs, on="run_id", validate="many_to_one")  # keeps the left order
    frame = frame.merge(kernels, on="kernel_id", validate="many_to_one")
    return frame.loc[:, list(COLUMNS)]


def _cutoff(
    session: StoreSession,
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


def _kernel_ids_for(session: StoreSession, rid: int, keys: Collection[str]) -> list[int]:
    hashes = [key_hash(k) for k in keys]
    ids: list[int] = []
    conn = session.connection()
    for start in range(0, len(hashes), _CHUNK):
        chunk = hashes[start : start + _CHUNK]
        stmt = sa.select(_KERNELS.c.id).where(
            _KERNELS.c.repo_id == rid, one_of(conn, _KERNELS.c.key_hash, chunk)
        )
        ids.extend(int(i) for i in session.execute(stmt).scalars())
    return ids


def read_baseline(*, session: StoreSession, query: BaselineQuery) -> Baseline:
    """The baseline history of a repository's kernels (HISTORY_COLUMNS, oldest first).

    The most recent ``query.window`` runs of ``query.base_branch`` of kind nightly or local
    (pull-request runs never become baseline) on ``query.device`` with ``query.roof_source``
    (None: any). Given the PR's merge base ``before_commit`` (a full or abbreviated SHA), the
    baseline stops at that commit's run, inclusive (its run on another card where this one
    has none; a card with no run up to it reads its nearest runs after it, ``_window``);
    when no run of that commit is stored it stops at ``before_timestamp`` if
    given, and ``merge_base_found`` is False. Rows of a
    kernel measured up to its latest ``accept_baseline`` are left out (``restarted`` names the
    kernels an acceptance within the history read restarted). With
    ``query.up_to_run``, only runs stored up to that run (a run judged again reads what it was
    first judged against). Driver, clock and cache columns are included so the env-mismatch
    rule can compare like with like.
    """
    rid = repo_id(session=session, repo=query.repo)
    device = query.device
    did = device_id(session=session, device=device) if device is not None else None
    if rid is None or (device is not None and did is None):
        found = query.before_commit is None
        return Baseline(_empty(), merge_base_found=found, up_to_run=query.up_to_run)
    base = _baseline_runs(rid, did, query.roof_source, query.base_branch)
    if query.up_to_run is not None:
        base = base.where(_RUNS.c.id <= query.up_to_run)
    cutoff, found = _cutoff(session, base, query.before_commit, query.before_timestamp)
    elsewhere = not found and did is not None
    if elsewhere:  # measured on another card: a runner swap since
        every_card = _baseline_runs(rid, None, query.roof_source, query.base_branch)
        cutoff, found = _cutoff(session, every_card, query.before_commit, query.before_timestamp)
    run_rows, after = _window(session, base, cutoff, query.window, elsewhere and found)
    keys = query.kernel_keys
    kernel_filter = None if keys is None else _kernel_ids_for(session, rid, keys)
    ids = [r.run_id for r in run_rows]
    meas = (
        _measurements(
            session,
            ids,
            kernel_filter,
            query.full_runs,
            as_columns=True,
            keep_columns=query.keep_columns,
        )
        if run_rows
        else None
    )
    # a full window read back to its oldest run; a shorter one, to the card's first
    since = as_utc(run_rows[-1].timestamp) if len(run_rows) >= query.window > 0 else None
    frame, restarted = after_acceptances(
        session, _frame(session, run_rows, meas), (rid, did), (since, query.accepted_until)
    )
    return Baseline(frame, tuple(reversed(ids)), cutoff, found, query.up_to_run, restarted, after)


def _window(
    session: StoreSession, base: sa.Select[Any], cutoff: datetime | None, window: int, swap: bool
) -> tuple[Sequence[Any], bool]:
    """The newest ``window`` runs of ``base`` up to ``cutoff`` (newest first); whether after it.

    ``swap``: the cut is a merge base measured on another card only. Where the run's card has
    no run up to it, its nearest runs after it are its baseline: the same card, and the
    kernels' level there nearest the branch's code. Judged against the other card instead, a
    PR's 27% fall the card's own nights show was a "did not keep up" warning, and whether it
    failed hinged on when its branch left the base branch.
    """
    limit = max(window, 0)
    cut = base.where(_RUNS.c.timestamp <= cutoff) if cutoff is not None else base
    newest = cut.order_by(_RUNS.c.timestamp.desc(), _RUNS.c.id.desc())
    rows = session.connection().execute(newest.limit(limit)).all()
    if rows or not swap or cutoff is None:
        return rows, False
    later = base.where(_RUNS.c.timestamp > cutoff)
    nearest = later.order_by(_RUNS.c.timestamp.asc(), _RUNS.c.id.asc()).limit(limit)
    found = session.connection().execute(nearest).all()
    return list(reversed(found)), bool(found)


def _baseline_runs(
    rid: int, did: int | None, roof_source: str | None, base_branch: str
) -> sa.Select[Any]:
    """Runs that may be baseline: base branch, nightly or local, same device and roof source."""
    base = _runs_select().where(
        _RUNS.c.repo_id == rid, _RUNS.c.branch == base_branch, _RUNS.c.kind.in_(BASELINE_KINDS)
    )
    if did is not None:
        base = base.where(_RUNS.c.device_id == did)
    if roof_source is not None:
        base = base.where(_RUNS.c.roof_source == roof_source)
    return base


def nightly_history(
    *,
    session: StoreSession,
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
    if repo is not None:
        stmt = stmt.where(same_repo(_REPOS.c.name, repo))
    for column, value in (
        (_DEVICES.c.name, device),
        (_RUNS.c.branch, branch),
    ):
        if value is not None:
            stmt = stmt.where(column == value)
    run_rows = session.connection().execute(stmt).all()
    meas = _measurements(session, [r.run_id for r in run_rows], None) if run_rows else None
    return _frame(session, run_rows, meas)


def kernel_history(
    *, session: StoreSession, repo: str, key: str, device: str | None = None
) -> pd.DataFrame:
    """Every stored measurement of one kernel, all run kinds (filter on ``kind``), oldest first.

    ``key`` may be the kernel's key or its name as the verdict prints it (``kernelnames``).
    """
    rid = repo_id(session=session, repo=repo)
    key = resolve_kernel_key(session=session, repo=repo, text=key)
    ids = _kernel_ids_for(session, rid, [key]) if rid is not None else []
    if not ids:
        return _empty()
    conn = session.connection()
    meas = read_frame(
        conn, _meas_select().where(_MEAS.c.kernel_id == ids[0]), _MEAS_COLUMNS, _FLOAT_COLUMNS
    )
    stmt = _runs_select().where(
        _RUNS.c.id.in_(sa.select(_MEAS.c.run_id).where(_MEAS.c.kernel_id == ids[0]))
    )
    if device is not None:
        stmt = stmt.where(_DEVICES.c.name == device)
    return _frame(session, conn.execute(stmt).all(), meas)
