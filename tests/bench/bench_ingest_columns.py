"""The column path of ``bench_ingest_scale.py --path columns`` (a helper module, not a script).

For each size: a Google Benchmark JSON file of N distinct benchmarks
(``bench_collect_scale.write_gbench``; ``--format ncu-csv-raw``: an ncu raw page, whose
record text of some 1.15 KB a kernel passes PostgreSQL's 1 GB a value at 1,000,000) is read
as columns (timed apart), stored into a fresh store by ``ingest_columns`` (all kernels
new), then the next night's file (all kernels known); beside it, on the same database, the
reference writes the same kernel and measurement rows with ids assigned beforehand, made from
the same columns (placement included, as the ingest's), by one bare COPY per table on
PostgreSQL (text, and again binary as the ingest sends them) or ``executemany`` on SQLite:
what writing those rows costs without the content identity, the id lookups or the run row.
The checks ``roofguard ingest`` makes before the store opens are timed too. Wall and CPU
seconds (this process; the server's own work shows in the wall time only) and the peak
memory the first ingest adds per kernel.
"""

from __future__ import annotations

import itertools
import json
import resource
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from bench_collect_scale import WRITERS
from bench_ingest_scale import reference_run
from bench_store import ROOF

from collectors import RunColumns, collect_columns
from service.config import RoofguardConfig
from service.pipeline.hugerun import clocked, refuse_unstorable_columns
from service.pipeline.roofs import choose_for
from service.pipeline.storable import StoreLimits
from service.store.batch_ingest import _COLUMNS, _measurement_rows, ingest_columns
from service.store.bulk import copy_tuples
from service.store.db import session_scope
from service.store.ids import device_id, key_hash
from service.store.tables import Kernel, Measurement, table_of


def _read(path: Path, night: int) -> RunColumns:
    columns = collect_columns(path)
    stamp = {"repo": "bench/huge", "commit": f"{night:040x}", "branch": "main"}
    columns.head = columns.head.model_copy(update={**stamp, "timestamp": datetime.now(UTC)})
    return columns


def _timed(work: Callable[[], Any]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def _ingest(engine: sa.Engine, columns: RunColumns) -> None:
    with session_scope(engine) as session:
        assert ingest_columns(session=session, columns=columns, roof=ROOF).created


def _bare(engine: sa.Engine, columns: RunColumns, binary: bool = False) -> None:
    """Reference: the same rows, ids assigned beforehand, one bare write per table.

    ``binary``: PostgreSQL's binary COPY (``bulk.copy_tuples``, as the ingest sends them).
    """
    kernels_t, meas_t = table_of(Kernel), table_of(Measurement)
    with session_scope(engine) as session:
        rid, base, run_id = reference_run(session, "bench/binary" if binary else "bench/reference")
        ids = {k: base + i + 1 for i, k in enumerate(columns.keys())}
        kernel_rows = (
            (ids[k], rid, k, key_hash(k), n)
            for c in columns.chunks
            for k, n in zip(c.keys, c.names, strict=True)
        )
        rows = (r for c in columns.chunks for r in _measurement_rows(c, ids, run_id, ROOF, 0.15))
        kernel_columns = ["id", "repo_id", "key", "key_hash", "name"]
        if binary:
            copy_tuples(session, kernels_t, kernel_columns, kernel_rows)
            copy_tuples(session, meas_t, list(_COLUMNS), map(_json_in, rows))
            return
        _write(session, kernels_t, kernel_columns, kernel_rows)
        _write(session, meas_t, list(_COLUMNS), rows, json_columns={"flops_json"})


def _json_in(row: tuple[Any, ...]) -> list[Any]:
    values = list(row)
    values[_FLOPS] = json.dumps(values[_FLOPS])
    return values


_FLOPS = _COLUMNS.index("flops_json")


def _write(
    session: Any,
    table: sa.Table,
    names: list[str],
    rows: Iterator[tuple[Any, ...]],
    json_columns: frozenset[str] | set[str] = frozenset(),
) -> None:
    """COPY on PostgreSQL, chunked ``executemany`` of tuples elsewhere."""
    at = [names.index(c) for c in json_columns]
    if session.get_bind().dialect.name == "postgresql":
        driver = session.connection().connection.driver_connection
        sql = f"COPY {table.name} ({', '.join(names)}) FROM STDIN"
        with driver.cursor() as cursor, cursor.copy(sql) as copy:
            for row in rows:
                values = list(row)
                for i in at:
                    values[i] = json.dumps(values[i])
                copy.write_row(values)
        return
    cursor = session.connection().connection.driver_connection.cursor()
    sql = f"INSERT INTO {table.name} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
    while chunk := list(itertools.islice(rows, 10_000)):
        if at:
            chunk = [tuple(json.dumps(v) if i in at else v for i, v in enumerate(r)) for r in chunk]
        cursor.executemany(sql, chunk)


def _checked(columns: RunColumns) -> None:
    """What ``roofguard ingest`` checks of a run read as columns before it opens the store."""
    refuse_unstorable_columns(columns, where="bench", limits=StoreLimits(max_kernels=10**8))
    choose_for(clocked(columns), RoofguardConfig(device=ROOF.device))  # as `--device`


def _peak() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0


def run_columns(
    sizes: str, backends: str, postgres_url: str, fresh_store: Any, fmt: str = "gbench-json"
) -> None:
    """Print the column path's table: wall and CPU seconds, µs per kernel, for each step."""
    print("| backend | kernels | step | wall s | CPU s | CPU µs/kernel |")
    print("|---|---:|---|---:|---:|---:|", flush=True)
    for backend in backends.split(","):
        for size in (int(s) for s in sizes.split(",")):
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / ("run.json" if fmt == "gbench-json" else "run.csv")
                WRITERS[fmt](path, size)
                steps = _measure(backend, size, path, postgres_url, fresh_store)
            for step, (wall, cpu) in steps.items():
                if step.startswith("peak"):
                    print(
                        f"| {backend} | {size:,} | {step} | {wall / 1e6:.0f} MB | | "
                        f"{wall / size:.0f} B/kernel |",
                        flush=True,
                    )
                    continue
                print(
                    f"| {backend} | {size:,} | {step} | {wall:.1f} | {cpu:.1f} | "
                    f"{cpu / size * 1e6:.1f} |",
                    flush=True,
                )


def _measure(
    backend: str, size: int, path: Path, postgres_url: str, fresh_store: Any
) -> dict[str, tuple[float, float]]:
    steps: dict[str, tuple[float, float]] = {}
    holder: dict[str, RunColumns] = {}
    steps["read as columns"] = _timed(lambda: holder.update(run=_read(path, 1)))
    steps["the run's checks before the store"] = _timed(lambda: _checked(holder["run"]))
    with fresh_store(backend, postgres_url) as engine:
        with session_scope(engine) as session:
            device_id(session=session, device=ROOF.device, create=True)
        before = _peak()
        steps["ingest_columns (new kernels)"] = _timed(lambda: _ingest(engine, holder["run"]))
        steps["peak memory added by that ingest"] = (_peak() - before, 0.0)
        night = _read(path, 2)
        steps["ingest_columns (known kernels)"] = _timed(lambda: _ingest(engine, night))
        steps["bare write, same rows (reference)"] = _timed(lambda: _bare(engine, night))
        if backend == "postgres":
            bare = _timed(lambda: _bare(engine, night, binary=True))
            steps["bare binary COPY, same rows (reference)"] = bare
    return steps
