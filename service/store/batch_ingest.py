"""Ingest of a run read as columns (``collectors.RunColumns``): what ``ingest_run`` stores.

The content identity is written from the chunks' skeletons and columns
(``ids.identity_of_columns``: the same text and hash as the records'), the kernels are
placed a chunk at a time on arrays (``rules.batchplace``), and the measurement rows are made
from the columns as they are sent: COPY on PostgreSQL, ``executemany`` elsewhere
(``service.store.bulk``). One transaction, the caller's session, as ``ingest_run``: the
same content twice writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import sqlalchemy as sa

from collectors import KernelChunk, RunColumns, paused_gc
from rules import Roof, RulesConfig, place_chunk
from service.errors import BadInput
from service.progress import stage
from service.store.bulk import copy_tuples, driver_executemany, refuse_defaulted_gaps
from service.store.coretables import MEASUREMENTS as _MEASUREMENTS
from service.store.ids import kernel_ids, write_identity_of_columns
from service.store.ingest import IngestResult, insert_run_row
from service.store.runrecord import RecordWriter
from service.store.sessions import StoreSession as Session

#: Runs of this many kernels show each long step on a terminal (as ``ingest``'s).
_PROGRESS_FROM = 50_000


def ingest_columns(
    *,
    session: Session,
    columns: RunColumns,
    roof: Roof,
    band: float = RulesConfig().borderline_band,
    trusted: bool = True,
) -> IngestResult:
    """Store a run read as columns, placed on ``roof`` (one transaction: the caller's session).

    Stores what ``ingest_run`` stores for the same run as records: the same content hash,
    record text, kernels and measurement rows.

    Raises:
        BadInput: The run names no repository.
    """
    if not columns.head.repo:
        raise BadInput("run has no repository; give --repo OWNER/NAME")
    with paused_gc():  # millions of small objects in no cycle: see collectors.gcpause
        return _ingest(session, columns, roof, band, trusted)


def _ingest(
    session: Session, columns: RunColumns, roof: Roof, band: float, trusted: bool
) -> IngestResult:
    head, count = columns.head, columns.kernel_count
    assert head.repo is not None  # checked by ingest_columns
    record = RecordWriter()  # compressed as it is written: a huge record is never held whole
    with _stage(count, "hashing the run's content"):
        digest = write_identity_of_columns(columns, record.write)
    row = insert_run_row(session, head, roof=roof, trusted=trusted, digest=digest, record=record)
    del record  # stored now: not held while the rows are made
    run_id, rid = row
    if rid is None:
        return IngestResult(run_id, False, digest, count)
    with _stage(count, "storing the kernels' identities"):
        names = {k: n for c in columns.chunks for k, n in zip(c.keys, c.names, strict=True)}
        ids = kernel_ids(session=session, repo_id=rid, kernels=names)
        del names
    with _stage(count, "storing measurements"):
        measured = (c for c in columns.chunks if c.shape.launches)  # as ingest_run: 0 s no time
        rows = (r for c in measured for r in _measurement_rows(c, ids, run_id, roof, band))
        write_tuples(session, _MEASUREMENTS, _COLUMNS, rows)
    return IngestResult(run_id, True, digest, count)


def _stage(count: int, what: str) -> AbstractContextManager[None]:
    if count < _PROGRESS_FROM:
        return nullcontext()
    return stage(f"{what} ({count:,} kernels)")


def _listed(values: Any) -> list[float | None]:
    """Floats as the row holds them: NaN and infinity (unknown, or over zero bytes) as None."""
    return [v if v == v and v not in (_INF, -_INF) else None for v in _plain(values)]


def _plain(values: Any) -> list[float | None]:
    """An array's numbers as Python floats (what the drivers write)."""
    out: list[float | None] = values.tolist()
    return out


_INF = float("inf")


def _measurement_rows(
    chunk: KernelChunk, ids: dict[str, int], run_id: int, roof: Roof, band: float
) -> Iterator[tuple[Any, ...]]:
    """``ingest.measurement_row`` of each kernel of ``chunk`` as a tuple of ``_COLUMNS``."""
    flops, nbytes = chunk.work()
    placed = place_chunk(flops, nbytes, chunk.duration_s, roof, band=band)
    size = chunk.size
    none: list[float | None] = [None] * size
    flop_values = {p: _plain(v) for p, v in flops.items()}
    per_kernel = zip(*flop_values.values(), strict=True)
    flops_json = [dict(zip(flop_values, f, strict=True)) for f in per_kernel] or [{}] * size
    tiers = {t: _plain(nbytes[t]) if t in nbytes else none for t in ("dram", "l2", "l1")}
    intensity = {t: _listed(placed.intensity[t]) if t in placed.intensity else none for t in tiers}
    values = (
        [ids[k] for k in chunk.keys],
        _plain(chunk.duration_s),
        flops_json,
        none if placed.total_flops is None else _plain(placed.total_flops),
        tiers["dram"],
        tiers["l2"],
        tiers["l1"],
        _listed(placed.percent_of_roof),
        placed.regime,
        placed.binding,
        placed.borderline,
        intensity["dram"],
        intensity["l2"],
        intensity["l1"],
        _listed(placed.t_roof_s),
        _listed(placed.peak_flop_time_s),
    )
    same = (run_id, chunk.shape.launches, roof.source)
    for row in zip(*values, strict=True):
        yield same + row


#: The measurement columns of ``_measurement_rows``' tuples, in their order.
_COLUMNS = (
    "run_id",
    "launches",
    "roof_source",
    "kernel_id",
    "time_s",
    "flops_json",
    "total_flops",
    "bytes_dram",
    "bytes_l2",
    "bytes_l1",
    "percent_of_roof",
    "regime",
    "binding",
    "borderline",
    "intensity_dram",
    "intensity_l2",
    "intensity_l1",
    "t_roof_s",
    "peak_flop_time_s",
)


def write_tuples(
    session: Session, table: sa.Table, columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    """Insert ``rows``, tuples of ``columns``' values: COPY on PostgreSQL, else ``executemany``.

    For rows made by the million (``service.store.batch_ingest``): the driver gets plain
    tuples, JSON columns written as ``json.dumps`` text as SQLAlchemy's JSON type writes them,
    without SQLAlchemy's processing of every value (a third of such an ingest on SQLite).
    """
    refuse_defaulted_gaps(table, columns)
    as_json = [i for i, c in enumerate(columns) if isinstance(table.c[c].type, sa.JSON)]
    texts = (_json_in(row, as_json) for row in rows) if as_json else rows
    if session.get_bind().dialect.name == "postgresql":
        copy_tuples(session, table, columns, texts)  # binary COPY
        return
    driver_executemany(session, table, columns, texts)


def _json_in(row: Sequence[Any], at: list[int]) -> list[Any]:
    values = list(row)
    for i in at:
        values[i] = json.dumps(values[i])
    return values
