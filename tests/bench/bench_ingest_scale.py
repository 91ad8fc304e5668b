"""Benchmark: is ingest linear in kernels? (a script, not a test; issue 14 item 6).

One run of N kernels (20,000 -> 100,000 -> 1,000,000) is ingested into a fresh store, on
SQLite and on PostgreSQL, the way ``roofguard ingest`` and an upload store it
(``ingest_run``: content identity, kernel ids by bulk upsert and lookup, one executemany of
the measurements), then once more as the next night (every kernel known: lookups only).
Side by side, on the same database in the same process, the reference:

* ``bare executemany``: the same kernel and measurement rows written by two plain
  ``executemany`` calls, ids known beforehand (no hashing, no lookups): the floor any
  ingest of these rows pays.

Placement (``rules.place_run``) is timed apart: it is the check's, not the store's. The peak
resident memory the first ingest adds to the process (the run and its placements are already
in memory; sizes run in increasing order, so an earlier peak does not hide it) is given per
kernel. On PostgreSQL the store writes by COPY (``service.store.bulk``), the reference by
``executemany``.

``--path columns`` (the default) measures the column path of huge runs instead
(``bench_ingest_columns``): a Google Benchmark file (``--format``) of N distinct kernels
read as columns, stored by
``ingest_columns``, beside a bare COPY (PostgreSQL) or ``executemany`` (SQLite) of the same
rows; ``--path records`` measures ``ingest_run`` of records as above.

Usage::

    python tests/bench/bench_ingest_scale.py [--sizes 20000,100000,1000000]
        [--backends sqlite,postgres] [--postgres-url URL] [--path columns|records]

Prints a markdown table (seconds, and microseconds per kernel: flat means linear) and the
load average before and after, since other processes on a shared box inflate every figure.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench_store import ROOF, make_run

from rules.placement import place_run
from rules.roofline import Placement
from service.store.db import open_store, session_scope
from service.store.ids import key_hash, repo_id
from service.store.ingest import ingest_run, measurement_row
from service.store.tables import Kernel, Measurement, Run, table_of


@contextmanager
def fresh_store(backend: str, postgres_url: str) -> Iterator[sa.Engine]:
    """A new, migrated store, dropped afterwards."""
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            engine = open_store(f"sqlite:///{tmp}/bench.db")
            try:
                yield engine
            finally:
                engine.dispose()
        return
    name = f"roofguard_bench_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = sa.engine.make_url(postgres_url).set(database=name)
    engine = open_store(url.render_as_string(hide_password=False))
    try:
        yield engine
    finally:
        engine.dispose()
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def timed(work: Any, *args: Any) -> float:
    start = time.perf_counter()
    work(*args)
    return time.perf_counter() - start


def ingest(engine: sa.Engine, run: Any, placements: dict[str, Placement]) -> None:
    """The store's ingest, one transaction."""
    with session_scope(engine) as session:
        assert ingest_run(session=session, run=run, placements=placements, roof=ROOF).created


def reference_run(session: Any, repo: str = "bench/reference") -> tuple[int, int, int]:
    """The bare writes' run: its repository id, the highest kernel id yet, and its id."""
    kernels_t, runs_t = table_of(Kernel), table_of(Run)
    rid = repo_id(session=session, repo=repo, create=True)
    assert rid is not None
    top = sa.select(sa.func.coalesce(sa.func.max(kernels_t.c.id), 0))
    base = int(session.execute(top).scalar_one())
    run_row = {
        "repo_id": rid,
        "device_id": 1,
        "kind": "nightly",
        "timestamp": datetime.now(UTC),
        "roof_source": "datasheet",
        "roof_label": "x",
        "roof_json": {},
        "content_hash": uuid.uuid4().hex,
        "record_json": "{}",
        "created_at": datetime.now(UTC),
    }
    run_id = session.execute(sa.insert(runs_t).returning(runs_t.c.id), run_row).scalar_one()
    return rid, base, int(run_id)


def bare_executemany(engine: sa.Engine, run: Any, placements: dict[str, Placement]) -> None:
    """Reference: the same rows, two plain executemany calls, ids assigned beforehand."""
    kernels_t, meas_t = table_of(Kernel), table_of(Measurement)
    with session_scope(engine) as session:
        rid, base, run_id = reference_run(session)
        rows = [
            {
                "id": base + i + 1,
                "repo_id": rid,
                "key": k.key,
                "key_hash": key_hash(k.key),
                "name": k.name,
            }
            for i, k in enumerate(run.kernels)
        ]
        session.execute(sa.insert(kernels_t), rows)
        measurements = [
            measurement_row(
                k,
                placements.get(k.key),
                run_id=run_id,
                kernel_id=base + i + 1,
                roof_source="datasheet",
            )
            for i, k in enumerate(run.kernels)
        ]
        session.execute(sa.insert(meas_t), measurements)


def measure(backend: str, size: int, postgres_url: str) -> dict[str, float]:
    """Seconds of each step for one run of ``size`` kernels on a fresh store."""
    run = make_run(1, size)
    start = time.perf_counter()
    placements = place_run(run, ROOF)
    figures = {"place": time.perf_counter() - start}
    with fresh_store(backend, postgres_url) as engine:
        with session_scope(engine) as session:  # the device row both writers use
            from service.store.ids import device_id

            device_id(session=session, device=ROOF.device, create=True)
        before = _peak_rss()
        figures["ingest (new kernels)"] = timed(ingest, engine, run, placements)
        figures["peak memory added by that ingest"] = _peak_rss() - before
        night = make_run(2, size)
        figures["ingest (known kernels)"] = timed(ingest, engine, night, place_run(night, ROOF))
        figures["bare executemany"] = timed(bare_executemany, engine, run, placements)
    return figures


def _peak_rss() -> float:
    """This process's peak resident memory so far, bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0


def _row(backend: str, size: int, step: str, value: float) -> str:
    if step.startswith("peak memory"):  # bytes, not seconds
        return f"| {backend} | {size:,} | {step} | {value / 1e6:.0f} MB | {value / size:.0f} B |"
    return f"| {backend} | {size:,} | {step} | {value:.1f} | {value / size * 1e6:.0f} |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,100000,1000000")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--path", choices=("columns", "records"), default="columns")
    parser.add_argument("--format", choices=("gbench-json", "ncu-csv-raw"), default="gbench-json")
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get(
            "ROOFGUARD_TEST_POSTGRES_URL", "postgresql+psycopg://root@127.0.0.1:5432/test"
        ),
    )
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()}", flush=True)
    if args.path == "columns":
        from bench_ingest_columns import run_columns

        run_columns(args.sizes, args.backends, args.postgres_url, fresh_store, args.format)
        print(f"load average after: {os.getloadavg()}")
        return 0
    print("| backend | kernels | step | s | µs/kernel |\n|---|---:|---|---:|---:|", flush=True)
    for backend in args.backends.split(","):
        for size in (int(s) for s in args.sizes.split(",")):
            for step, value in measure(backend, size, args.postgres_url).items():
                print(_row(backend, size, step, value), flush=True)
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
