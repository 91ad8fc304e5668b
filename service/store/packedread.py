"""The digest's batch read on PostgreSQL: each run's measurements packed by the server.

psycopg hands over COPY data a row at a time (about 1 us of Python each: most of a read of
29 M rows); here PostgreSQL packs each run's measurements into one byte string of fixed-width
fields (``int8send``, ``float8send``; the kernel id, regime and binding codes in one int8) and
numpy reads them in place: a row per run, not per value. The strings come in PostgreSQL's
binary format (``fetch_binary``): as text they were hex, twice the bytes, encoded by the
server and decoded here.

The codes index the regime and binding names met so far in the read (``NamesSeen``), set by a
``CASE`` (a third of the server's time per row went to ``array_position``). A name not met
before gets ``UNSEEN``; only then are the batch's names read and the batch packed again:
reading every batch's names first was a second pass over its rows, half of PostgreSQL's time.
Two connections pack alternate batches at once (``packed_batches``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import sqlalchemy as sa

#: A measurement as packed: big-endian, fixed width; ``key`` is the kernel id above the regime's
#: and the binding's 16-bit codes (``NamesSeen``), NULL percent of roof NaN.
_PACKED = np.dtype([("key", ">i8"), ("percent_of_roof", ">f8"), ("time_s", ">f8")])
_CODE_BITS = 16
_CODE_MASK = (1 << _CODE_BITS) - 1
#: The code of a name not met yet in the read (0 is NULL, 1.. the names met): the largest.
UNSEEN = _CODE_MASK


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
        """SQL for the 1-based position of ``column``'s name: 0 for NULL, ``UNSEEN`` if new."""
        names = self.regimes if column == "regime" else self.bindings
        if len(names) >= UNSEEN:
            raise ValueError(f"{column}: more than {UNSEEN - 1} names in one read")
        known = " ".join(
            f"WHEN {column} = {_quoted(name)} THEN {i}" for i, name in enumerate(names, start=1)
        )
        return f"(CASE WHEN {column} IS NULL THEN 0 {known} ELSE {UNSEEN} END)"


def _quoted(name: str) -> str:
    return "'" + name.replace("'", "''") + "'"


def fetch_binary(conn: sa.Connection, sql: str) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` on ``conn``'s psycopg connection, in PostgreSQL's binary format.

    A ``bytea`` comes as its bytes (as text it is hex: twice the bytes, encoded and decoded).
    """
    driver = conn.connection.driver_connection
    assert driver is not None
    with driver.cursor(binary=True) as cursor:
        cursor.execute(sql)
        rows: list[tuple[Any, ...]] = cursor.fetchall()
    return rows


def _packed_runs(
    conn: sa.Connection, where: str, seen: NamesSeen
) -> dict[int, npt.NDArray[np.void]] | None:
    """Each run's packed measurements, or None when a row holds a name not in ``seen``."""
    key = (  # int8 throughout: an int4 code shifted 16 bits up would take the sign bit
        f"(kernel_id::int8 << {2 * _CODE_BITS}) | ({seen.code('regime')}::int8 << {_CODE_BITS}) | "
        f"{seen.code('binding')}::int8"
    )
    record = (
        f"int8send({key}) || float8send(COALESCE(percent_of_roof, 'NaN'::float8)) || "
        "float8send(time_s)"
    )
    sql = f"SELECT run_id, string_agg({record}, ''::bytea) {where} GROUP BY run_id"
    packed = {int(run): np.frombuffer(rows, dtype=_PACKED) for run, rows in fetch_binary(conn, sql)}
    return None if any(_unseen(rows["key"]) for rows in packed.values()) else packed


def _unseen(keys: npt.NDArray[np.int64]) -> bool:
    """Whether a regime or binding code of ``keys`` is ``UNSEEN``."""
    return bool(((_codes(keys, _CODE_BITS) == UNSEEN) | (_codes(keys, 0) == UNSEEN)).any())


def _codes(keys: npt.NDArray[np.int64], shift: int) -> npt.NDArray[np.int64]:
    """The 16-bit codes ``shift`` bits up in ``keys``: the binding's at 0, the regime's at 16."""
    return (keys >> shift) & _CODE_MASK


def _by_kernel(runs: list[npt.NDArray[np.void]]) -> npt.NDArray[np.void]:
    """The runs' rows joined, each run's by kernel id (as read, unless the plan reordered them).

    The rows come in the index's order, but an aggregate's input order is not promised; sorting
    here costs a comparison a row where ``ORDER BY`` in the aggregate cost PostgreSQL a sort.
    """
    rows = np.concatenate(runs) if runs else np.zeros(0, dtype=_PACKED)
    rank = np.repeat(np.arange(len(runs), dtype=np.int64), [r.size for r in runs])
    key = (rank << 32) | (rows["key"] >> 2 * _CODE_BITS)
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
    runs = [packed[i] for i in present]
    rows = _by_kernel(runs)
    keys = rows["key"].astype(np.int64)
    return {
        "run_id": np.repeat(np.asarray(present, dtype=np.int32), [r.size for r in runs]),
        "kernel_id": (keys >> 2 * _CODE_BITS).astype(np.int32),
        "percent_of_roof": rows["percent_of_roof"].astype(float),
        "time_s": rows["time_s"].astype(float),
        "regime": _labelled(_codes(keys, _CODE_BITS), seen.regimes),
        "binding": _labelled(_codes(keys, 0), seen.bindings),
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
