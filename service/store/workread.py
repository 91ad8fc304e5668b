"""The work counters of chosen measurements, for the few rows the digest needs them on.

The digest's compact read (``digestread``) leaves the counters out: 29 M rows of five floats
are over a gigabyte. A device change reads them for the card before's last nights (whole runs,
``run_work``), the charts for a few dozen series and each card's last night (``pair_work``:
only those measurements, looked up by their (run, kernel) key), and a binding change's
like-for-like figure for a few series (``counters``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import sqlalchemy as sa

from service.store.coretables import MEASUREMENTS as _MEAS
from service.store.coretables import RUNS as _RUNS
from service.store.digestread import RUNS_PER_BATCH
from service.store.fastread import raw_rows, read_frame
from service.store.packedread import fetch_binary
from service.store.sessions import StoreSession

_COUNTERS = ("total_flops", "bytes_dram", "bytes_l2", "bytes_l1")


def counters(
    session: StoreSession, kernel_ids: Iterable[Any], run_ids: Iterable[Any]
) -> pd.DataFrame:
    """``run_id``, ``kernel_id`` and the work counters of some kernels in some runs.

    For the few series a like-for-like figure is recomputed for (a kernel whose binding
    changed): the digest's compact read does not carry the counters.
    """
    m = _MEAS.c
    found: list[tuple[object, ...]] = []
    wanted = sorted({int(k) for k in kernel_ids})
    runs = sorted({int(r) for r in run_ids})
    for first in range(0, len(runs), 500):
        stmt = sa.select(m.run_id, m.kernel_id, *(m[c] for c in _COUNTERS)).where(
            m.kernel_id.in_(wanted), m.run_id.in_(runs[first : first + 500])
        )
        found.extend(tuple(r) for r in session.connection().execute(stmt))
    frame = pd.DataFrame(found, columns=["run_id", "kernel_id", *_COUNTERS])
    return frame.astype({"run_id": np.int32, "kernel_id": np.int32} | {c: float for c in _COUNTERS})


#: The work columns ``run_work`` reads, in this order.
WORK_COLUMNS = ("total_flops", "peak_flop_time_s", "bytes_dram", "bytes_l2", "bytes_l1")
_WORK_PACKED = np.dtype([("kernel_id", ">i4"), *((c, ">f8") for c in WORK_COLUMNS)])


def _work_batch(conn: sa.Connection, run_ids: Sequence[int]) -> pd.DataFrame:
    """``run_id``, ``kernel_id`` and ``WORK_COLUMNS`` of every measurement of ``run_ids``."""
    if conn.dialect.name != "postgresql" or conn.dialect.driver != "psycopg":
        stmt = sa.select(_MEAS.c.run_id, _MEAS.c.kernel_id, *(_MEAS.c[c] for c in WORK_COLUMNS))
        columns = ("run_id", "kernel_id", *WORK_COLUMNS)
        return read_frame(conn, stmt.where(_MEAS.c.run_id.in_(run_ids)), columns, WORK_COLUMNS)
    record = " || ".join(
        [
            "int4send(kernel_id)",
            *(f"float8send(COALESCE({c}, 'NaN'::float8))" for c in WORK_COLUMNS),
        ]
    )
    ids = ", ".join(str(int(i)) for i in run_ids)
    sql = (
        f"SELECT run_id, string_agg({record}, ''::bytea ORDER BY kernel_id) "
        f"FROM measurements WHERE run_id IN ({ids}) GROUP BY run_id"
    )
    packed = [(int(r), np.frombuffer(b, dtype=_WORK_PACKED)) for r, b in fetch_binary(conn, sql)]
    rows = np.concatenate([p for _, p in packed]) if packed else np.zeros(0, dtype=_WORK_PACKED)
    return pd.DataFrame(
        {
            "run_id": np.repeat([r for r, _ in packed], [p.size for _, p in packed]),
            "kernel_id": rows["kernel_id"].astype(np.int64),
            **{c: rows[c].astype(float) for c in WORK_COLUMNS},
        }
    )


def _pair_keys(run_ids: Any, kernel_ids: Any) -> npt.NDArray[np.int64]:
    """One int64 key a (run, kernel) pair: the run id above the kernel id's 32 bits."""
    return (np.asarray(run_ids, dtype=np.int64) << 32) | np.asarray(kernel_ids, dtype=np.int64)


class _Wanted:
    """The rows ``WORK_COLUMNS`` are wanted for, by (run, kernel), and the columns being filled.

    A (run, kernel) pair is one measurement, so one read row serves each wanted row with its
    pair; NaN stays where a counter is not stored.
    """

    def __init__(self, run_ids: npt.NDArray[np.integer], kernel_ids: npt.NDArray[np.integer]):
        wanted = _pair_keys(run_ids, kernel_ids)
        self.order = np.argsort(wanted, kind="stable")
        self.ordered = wanted[self.order]
        self.work: dict[str, npt.NDArray[np.float64]] = {
            c: np.full(len(wanted), np.nan) for c in WORK_COLUMNS
        }

    def place(self, part: pd.DataFrame) -> None:
        """Write ``part``'s rows (``run_id``, ``kernel_id``, ``WORK_COLUMNS``) where wanted."""
        keys = _pair_keys(part["run_id"], part["kernel_id"])
        first = np.searchsorted(self.ordered, keys, "left")
        count = np.searchsorted(self.ordered, keys, "right") - first
        source = np.repeat(np.arange(len(keys)), count)
        within = np.arange(len(source)) - np.repeat(np.cumsum(count) - count, count)
        rows = self.order[np.repeat(first, count) + within]
        for c in WORK_COLUMNS:
            self.work[c][rows] = part[c].to_numpy(dtype=float)[source]


def run_work(
    session: StoreSession, run_ids: npt.NDArray[np.integer], kernel_ids: npt.NDArray[np.integer]
) -> dict[str, npt.NDArray[np.float64]]:
    """``WORK_COLUMNS`` of the measurements (``run_ids[i]``, ``kernel_ids[i]``), row by row.

    For a card's history that a device change judges: the runs are read whole, a batch at a
    time as ``digest_history`` reads them, and each batch's wanted rows are written into the
    columns at once (a year of a fleet's runs whole is gigabytes, and their wanted rows joined
    before they are placed 0.8 GB at 7 M rows).
    """
    conn = session.connection()
    runs = [int(r) for r in pd.unique(run_ids)]
    wanted = _Wanted(run_ids, kernel_ids)
    for i in range(0, len(runs), RUNS_PER_BATCH):
        wanted.place(_work_batch(conn, runs[i : i + RUNS_PER_BATCH]))
    return wanted.work


#: Pairs per lookup query outside PostgreSQL: two bound values each, under SQLite's limit.
PAIRS_PER_QUERY = 4000


def _pair_batch(conn: sa.Connection, runs: list[int], kernels: list[int]) -> pd.DataFrame:
    """``run_id``, ``kernel_id`` and ``WORK_COLUMNS`` of the measurements of these pairs.

    On PostgreSQL the pairs go as two arrays joined on the (run, kernel) unique index; other
    stores get a row-value ``IN`` list.
    """
    columns = ("run_id", "kernel_id", *WORK_COLUMNS)
    if conn.dialect.name == "postgresql":
        sql = sa.text(
            f"SELECT m.run_id, m.kernel_id, {', '.join(f'm.{c}' for c in WORK_COLUMNS)} "
            "FROM unnest(CAST(:runs AS int4[]), CAST(:kernels AS int4[])) AS w(run_id, kernel_id) "
            "JOIN measurements AS m ON m.run_id = w.run_id AND m.kernel_id = w.kernel_id"
        )
        found = raw_rows(conn, sql.bindparams(runs=runs, kernels=kernels))
        return pd.DataFrame(found, columns=list(columns)).astype(dict.fromkeys(WORK_COLUMNS, float))
    m = _MEAS.c
    stmt = sa.select(m.run_id, m.kernel_id, *(m[c] for c in WORK_COLUMNS)).where(
        sa.tuple_(m.run_id, m.kernel_id).in_(list(zip(runs, kernels, strict=True)))
    )
    return read_frame(conn, stmt, columns, WORK_COLUMNS)


def pair_work(
    session: StoreSession, run_ids: npt.NDArray[np.integer], kernel_ids: npt.NDArray[np.integer]
) -> dict[str, npt.NDArray[np.float64]]:
    """``WORK_COLUMNS`` of the measurements (``run_ids[i]``, ``kernel_ids[i]``), row by row.

    As ``run_work``, but each measurement is looked up by its key: for the charts' rows, spread
    thinly over many runs (a listed series spans every night), where reading those runs whole
    read the whole history a second time (66 s of a fleet's 29 M-row digest).
    """
    wanted = _Wanted(run_ids, kernel_ids)
    distinct = np.unique(wanted.ordered)
    runs = [int(r) for r in distinct >> 32]
    kernels = [int(k) for k in distinct & 0xFFFFFFFF]
    conn = session.connection()
    step = max(len(runs), 1) if conn.dialect.name == "postgresql" else PAIRS_PER_QUERY
    for i in range(0, len(runs), step):
        wanted.place(_pair_batch(conn, runs[i : i + step], kernels[i : i + step]))
    return wanted.work


def run_roof_sources(session: StoreSession, run_ids: Iterable[Any]) -> dict[int, str | None]:
    """Each run's ``roof_source``."""
    ids = sorted({int(i) for i in run_ids})
    found: dict[int, str | None] = {}
    for first in range(0, len(ids), 500):
        stmt = sa.select(_RUNS.c.id, _RUNS.c.roof_source).where(
            _RUNS.c.id.in_(ids[first : first + 500])
        )
        found.update((int(i), s) for i, s in session.connection().execute(stmt))
    return found
