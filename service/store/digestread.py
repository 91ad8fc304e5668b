"""The digest's read of nightly history: its own columns, in batches of runs, compact types.

``nightly_history`` returns every history column as Python strings, about 5 KB a
measurement once joined: a fleet's 2.5 years (29 M measurements) would not fit in memory.
The digest needs nine columns; here each batch of runs is read and shrunk to numbers at once:
ids as int32, regime and binding as categories, and the run's and kernel's strings joined at
the end as categories too (codes, one copy of each string). About 40 bytes a measurement.
On PostgreSQL each run of a batch comes as one packed byte string of fixed-width fields
(strings sent as codes), which numpy reads in place (``packedread``); other stores go through
``fastread.read_frame``.

Categories are sorted, so group-bys and sorts order series as plain strings would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import sqlalchemy as sa
from pandas.api.types import union_categoricals

from service.store.coretables import DEVICES as _DEVICES
from service.store.coretables import KERNELS as _KERNELS
from service.store.coretables import MEASUREMENTS as _MEAS
from service.store.coretables import REPOSITORIES as _REPOS
from service.store.coretables import RUNS as _RUNS
from service.store.fastread import raw_rows, read_frame
from service.store.ids import as_utc, same_repo
from service.store.memory import give_back_freed
from service.store.packedread import packed_batches
from service.store.sessions import StoreSession

#: The columns the digest reads, in order (``service.digest.build.DIGEST_COLUMNS`` is this).
DIGEST_READ_COLUMNS = (
    "commit",
    "timestamp",
    "kernel_key",
    "kernel_name",
    "device",
    "percent_of_roof",
    "regime",
    "binding",
    "time_s",
)
_MEAS_READ = ("run_id", "kernel_id", "percent_of_roof", "time_s", "regime", "binding")
#: Runs read per query: 32 nightly runs of 8,000 kernels are 256,000 rows (about 20 MB of
#: CSV), so the text of one batch is all that is held beyond the compact arrays.
RUNS_PER_BATCH = 32
Progress = Callable[[int, int], None]


def _runs(session: StoreSession, repo: str | None, start: datetime, end: datetime) -> pd.DataFrame:
    r = _RUNS.c
    stmt = (
        sa.select(r.id, r.commit, r.timestamp, _DEVICES.c.name, r.repo_id)
        .join(_DEVICES, _DEVICES.c.id == r.device_id)
        .join(_REPOS, _REPOS.c.id == r.repo_id)
        .where(r.kind == "nightly", r.timestamp >= as_utc(start), r.timestamp < as_utc(end))
        .order_by(r.timestamp, r.id)
    )
    if repo is not None:
        stmt = stmt.where(same_repo(_REPOS.c.name, repo))
    rows = [tuple(r) for r in session.connection().execute(stmt)]  # typed: SQLite's timestamps
    runs = pd.DataFrame(rows, columns=["run_id", "commit", "timestamp", "device", "repo_id"])
    runs["timestamp"] = pd.to_datetime([as_utc(t) for t in runs["timestamp"]], utc=True)
    return runs


def nightly_repositories(*, session: StoreSession, until: datetime) -> list[tuple[str, datetime]]:
    """Each repository with a nightly run up to ``until`` (inclusive) and its newest; by name."""
    r = _RUNS.c
    stmt = (
        sa.select(_REPOS.c.name, sa.func.max(r.timestamp))
        .join(_REPOS, _REPOS.c.id == r.repo_id)
        .where(r.kind == "nightly", r.timestamp <= as_utc(until))
        .group_by(_REPOS.c.name)
        .order_by(_REPOS.c.name)
    )
    return [(str(name), as_utc(newest)) for name, newest in session.connection().execute(stmt)]


def _kernels(session: StoreSession, repo_ids: Sequence[int]) -> pd.DataFrame:
    k = _KERNELS.c
    stmt = sa.select(k.id, k.key, k.name).where(k.repo_id.in_(repo_ids)).order_by(k.id)
    return pd.DataFrame(raw_rows(session.connection(), stmt), columns=["kernel_id", "key", "name"])


def _batches(session: StoreSession, run_ids: Sequence[int]) -> Iterator[dict[str, Any]]:
    """Each batch of runs' measurements (in the runs' order, then by kernel), compact types.

    Columns as arrays, not a frame: a frame would stack the two float columns (a copy), and
    ``digest_history`` drops each batch's columns one at a time as it joins them.
    """
    conn = session.connection()
    batches = [run_ids[i : i + RUNS_PER_BATCH] for i in range(0, len(run_ids), RUNS_PER_BATCH)]
    if conn.dialect.name == "postgresql" and conn.dialect.driver == "psycopg":
        yield from packed_batches(conn, batches)
    else:
        yield from (_rows_batch(conn, batch) for batch in batches)


def _rows_batch(conn: sa.Connection, run_ids: Sequence[int]) -> dict[str, Any]:
    stmt = sa.select(*(_MEAS.c[c] for c in _MEAS_READ)).where(_MEAS.c.run_id.in_(run_ids))
    part = read_frame(conn, stmt, _MEAS_READ, ("percent_of_roof", "time_s"))
    part = part.astype({"regime": "category", "binding": "category"})
    rank = pd.Series(np.arange(len(run_ids)), index=list(run_ids))
    part = part.iloc[np.lexsort((part["kernel_id"].to_numpy(), rank[part["run_id"]].to_numpy()))]
    return {
        "run_id": part["run_id"].to_numpy(dtype=np.int32),
        "kernel_id": part["kernel_id"].to_numpy(dtype=np.int32),
        "percent_of_roof": part["percent_of_roof"].to_numpy(dtype=float),
        "time_s": part["time_s"].to_numpy(dtype=float),
        "regime": part["regime"].array,
        "binding": part["binding"].array,
    }


def _sorted_categories(values: Any) -> pd.Categorical:
    return pd.Categorical(values, categories=sorted(set(values)))


def _joined(parts: list[dict[str, Any]], column: str) -> Any:
    """``column`` of every batch joined, each batch's copy dropped (29 M rows: 0.2 GB a column).

    Categories are joined sorted, as ``_sorted_categories`` makes them.
    """
    pieces = [p.pop(column) for p in parts]
    if isinstance(pieces[0], pd.Categorical):
        return pd.Categorical(union_categoricals(pieces, sort_categories=True))
    return np.concatenate(pieces)


def _lookup(labels: pd.Categorical, index: npt.NDArray[np.integer[Any]]) -> pd.Categorical:
    """``labels[index]`` as a categorical with the same (sorted) categories."""
    return pd.Categorical.from_codes(labels.codes[index], categories=labels.categories)


def digest_history(
    *,
    session: StoreSession,
    repo: str | None,
    start: datetime,
    end: datetime,
    progress: Progress | None = None,
    with_ids: bool = False,
) -> pd.DataFrame:
    """Nightly measurements in ``[start, end)`` with ``DIGEST_READ_COLUMNS`` (compact types).

    Args:
        session: An open session on the store.
        repo: OWNER/NAME, or None for every repository.
        start: First instant read (inclusive).
        end: Last instant read (exclusive).
        progress: Called with (runs read, runs in all) after each batch.
        with_ids: Add ``run_id`` and ``kernel_id`` (int32), for reading more of some rows.

    Returns:
        One row per measurement, as ``nightly_history`` orders them (time, run, kernel);
        strings as sorted categories.
    """
    runs = _runs(session, repo, start, end)
    ids = runs["run_id"].to_list()
    parts = []
    for part in _batches(session, ids):
        parts.append(part)
        if progress is not None:
            progress(min(len(parts) * RUNS_PER_BATCH, len(ids)), len(ids))
    if not parts or not sum(len(p["run_id"]) for p in parts):
        columns = [*DIGEST_READ_COLUMNS, *(("run_id", "kernel_id") if with_ids else ())]
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    kernels = _kernels(session, sorted(set(runs["repo_id"].to_list())))
    run_id, kernel_id = _joined(parts, "run_id"), _joined(parts, "kernel_id")
    run_row, kernel_row = (
        _rows_of(runs["run_id"].to_numpy(), run_id),
        _rows_of(kernels["kernel_id"].to_numpy(), kernel_id),
    )
    kept = {"run_id": run_id, "kernel_id": kernel_id} if with_ids else {}
    del run_id, kernel_id  # unless kept: 0.2 GB at 29 M rows, freed before the columns
    made: dict[str, Any] = {
        "commit": _lookup(_sorted_categories(runs["commit"]), run_row),
        "timestamp": runs["timestamp"].array.take(run_row),
        "kernel_key": _lookup(_sorted_categories(kernels["key"]), kernel_row),
        "kernel_name": _lookup(_sorted_categories(kernels["name"]), kernel_row),
        "device": _lookup(_sorted_categories(runs["device"]), run_row),
    }
    del run_row, kernel_row
    made |= {c: _joined(parts, c) for c in DIGEST_READ_COLUMNS if c not in made}
    give_back_freed()  # the batches' arrays, freed: 0.7 GB at 29 M rows
    # Not copied into blocks (a frame from a dict stacks its float columns: 0.5 GB at 29 M).
    return pd.DataFrame({**{c: made[c] for c in DIGEST_READ_COLUMNS}, **kept}, copy=False)


def _rows_of(ids: npt.NDArray[np.integer[Any]], wanted: npt.NDArray[np.int32]) -> Any:
    """Each of ``wanted``'s row in ``ids`` (all there), in 4 bytes: 29 M rows of 8 are 0.2 GB.

    Looked up in a table by id where the ids are no more than the rows wanted (the table no
    larger than the answer): one gather, where a binary search took 1.7 s at 29 M rows.
    """
    if len(ids) and ids.min() >= 0 and ids.max() < max(len(wanted), 1 << 16):
        table = np.full(int(ids.max()) + 1, -1, dtype=np.int32)
        table[ids] = np.arange(len(ids), dtype=np.int32)
        return table[wanted]
    by_id = np.argsort(ids).astype(np.int32)
    return by_id[np.searchsorted(ids[by_id], wanted)]
