"""The digest's batch read on PostgreSQL: each run's measurements packed by the server.

psycopg hands over COPY data a row at a time (about 1 us of Python each: most of a read of
29 M rows); here PostgreSQL packs each run's measurements into one byte string of fixed-width
fields (``int4send``, ``float8send``; regime and binding as codes) and numpy reads them in
place: a row per run, not per value.

The codes index the regime and binding names met so far in the read (``NamesSeen``). A batch
holding a name not met before says so in the same query, and only then are its names read
and the batch packed again: reading every batch's names first was a second pass over its rows,
half of PostgreSQL's time. Two connections pack alternate batches at once (``packed_batches``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import sqlalchemy as sa

#: A measurement as packed: big-endian, fixed width (NULL percent of roof as NaN, regime and
#: binding as 1-based codes, 0 for NULL).
_PACKED = np.dtype(
    [
        ("kernel_id", ">i4"),
        ("percent_of_roof", ">f8"),
        ("time_s", ">f8"),
        ("regime", ">i4"),
        ("binding", ">i4"),
    ]
)


class NamesSeen:
    """The regime and binding names met so far in one read, each list sorted."""

    def __init__(self) -> None:
        self.regimes: list[str] = []
        self.bindings: list[str] = []

    def learn(self, pairs: Iterable[tuple[str | None, str | None]]) -> None:
        """Add the (regime, binding) names of ``pairs``."""
        pairs = list(pairs)
        self.regimes = sorted(set(self.regimes) | {r for r, _ in pairs if r is not None})
        self.bindings = sorted(set(self.bindings) | {b for _, b in pairs if b is not None})

    def code(self, column: str) -> str:
        """SQL for the 1-based position of ``column``'s name (0 for NULL or a new name)."""
        return f"COALESCE(array_position({self._names(column)}, {column}::text), 0)"

    def new(self, column: str) -> str:
        """SQL that is true for a row whose ``column`` holds a name not met yet."""
        position = f"array_position({self._names(column)}, {column}::text)"
        return f"({column} IS NOT NULL AND {position} IS NULL)"

    def _names(self, column: str) -> str:
        names = self.regimes if column == "regime" else self.bindings
        quoted = ", ".join("'" + name.replace("'", "''") + "'" for name in names)
        return f"ARRAY[{quoted}]::text[]"


def _packed_runs(conn: sa.Connection, where: str, seen: NamesSeen) -> dict[int, bytes] | None:
    """Each run's packed measurements, or None when a row holds a name not in ``seen``."""
    record = (
        "int4send(kernel_id) || float8send(COALESCE(percent_of_roof, 'NaN'::float8)) || "
        f"float8send(time_s) || int4send({seen.code('regime')}) || "
        f"int4send({seen.code('binding')})"
    )
    unseen = f"bool_or({seen.new('regime')} OR {seen.new('binding')})"
    sql = f"SELECT run_id, string_agg({record}, ''::bytea), {unseen} {where} GROUP BY run_id"
    rows = conn.exec_driver_sql(sql).all()
    if any(new for _, _, new in rows):
        return None
    return {int(run): bytes(packed) for run, packed, _ in rows}


def _by_kernel(runs: list[npt.NDArray[np.void]]) -> npt.NDArray[np.void]:
    """The runs' rows joined, each run's by kernel id (as read, unless the plan reordered them).

    The rows come in the index's order, but an aggregate's input order is not promised; sorting
    here costs a comparison a row where ``ORDER BY`` in the aggregate cost PostgreSQL a sort.
    """
    rows = np.concatenate(runs) if runs else np.zeros(0, dtype=_PACKED)
    rank = np.repeat(np.arange(len(runs), dtype=np.int64), [r.size for r in runs])
    key = (rank << 32) | rows["kernel_id"].astype(np.int64)
    return rows if (np.diff(key) > 0).all() else rows[np.argsort(key, kind="stable")]


def _labelled(codes: npt.NDArray[Any], names: list[str]) -> pd.Categorical[Any]:
    return pd.Categorical.from_codes(
        codes.astype(np.int32) - 1, dtype=pd.CategoricalDtype(list(names))
    )


def _packed_batch(conn: sa.Connection, run_ids: Sequence[int], seen: NamesSeen) -> dict[str, Any]:
    """``run_ids``' measurements (in the runs' order, then by kernel) as compact arrays."""
    ids = ", ".join(str(int(i)) for i in run_ids)
    where = f"FROM measurements WHERE run_id IN ({ids})"
    packed = _packed_runs(conn, where, seen)
    if packed is None:  # a name not met before: learn the batch's names, then pack it again
        seen.learn(
            tuple(r) for r in conn.exec_driver_sql(f"SELECT DISTINCT regime, binding {where}")
        )
        packed = _packed_runs(conn, where, seen)
        assert packed is not None, "the batch's names were just read"
    present = [i for i in run_ids if i in packed]
    runs = [np.frombuffer(packed[i], dtype=_PACKED) for i in present]
    rows = _by_kernel(runs)
    return {
        "run_id": np.repeat(np.asarray(present, dtype=np.int32), [r.size for r in runs]),
        "kernel_id": rows["kernel_id"].astype(np.int32),
        "percent_of_roof": rows["percent_of_roof"].astype(float),
        "time_s": rows["time_s"].astype(float),
        "regime": _labelled(rows["regime"], seen.regimes),
        "binding": _labelled(rows["binding"], seen.bindings),
    }


def packed_batches(
    conn: sa.Connection, batches: Sequence[Sequence[int]]
) -> Iterator[dict[str, Any]]:
    """Each batch's measurements in turn, as ``_packed_batch``, two batches read at once.

    A PostgreSQL backend packs one query on one core: most of a fleet's read is the server's
    (21 s of 28 s at 29 M rows). Here a second connection, in a thread of its own, reads every
    other batch, so two backends pack at once. Each batch is one statement, as on one
    connection, so it sees what was committed when it ran either way.
    """
    if len(batches) < 2:
        yield from (_packed_batch(conn, batch, NamesSeen()) for batch in batches)
        return
    with conn.engine.connect() as other, ThreadPoolExecutor(1, "roofguard-read") as reader:
        mine, its = NamesSeen(), NamesSeen()  # each connection's codes its own
        for i in range(0, len(batches), 2):
            ahead = (
                reader.submit(_packed_batch, other, batches[i + 1], its)
                if i + 1 < len(batches)
                else None
            )
            yield _packed_batch(conn, batches[i], mine)
            if ahead is not None:
                yield ahead.result()
