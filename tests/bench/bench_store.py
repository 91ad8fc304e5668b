"""Benchmark of the history store's share of ``roofguard check`` (a script, not a test).

A 2,000-kernel pull-request run is ingested (one transaction) and its baseline is read for all
its kernels (``read_baseline``), against a history of nightly runs that grows
30 -> 90 -> 180 -> 365 runs (2,000 measurements each), on SQLite and on PostgreSQL. Side by
side, in the same process and on the same database, two references:

* ``orm-per-row ingest``: the same run stored as one ORM object per measurement (what the store
  avoids);
* ``single-join read``: the baseline as one ``pandas.read_sql`` join query over the same runs.

The baseline is read from the rows (as a reader does before any check kept the runs' columns)
and from the columns a check keeps (``service.store.columnar``), which a check reads.

Usage::

    python tests/bench/bench_store.py [--lengths 30,90,180,365] [--kernels 2000]
        [--backends sqlite,postgres] [--postgres-url URL] [--repeat 3]

Prints a markdown table (best of ``--repeat`` timings, seconds) and the machine's load average
before and after, since other processes on a shared box inflate every figure.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from collectors.schema import DeviceInfo, KernelRecord, ProfilerInfo, RunKind, RunRecord
from rules.hardware import builtin_catalog
from rules.placement import place_run
from service.store.db import open_store, session_scope
from service.store.history import BaselineQuery, read_baseline
from service.store.ids import kernel_ids, repo_id
from service.store.ingest import ingest_run, measurement_row
from service.store.tables import Measurement, Run, RunColumns, table_of

REPO = "bench/llm"
ROOF = builtin_catalog().lookup("H100-SXM5").roof()
START = datetime(2025, 1, 1, tzinfo=UTC)


def make_kernels(n: int, rng: random.Random) -> list[KernelRecord]:
    """``n`` kernels with realistic names and counters; times jitter by ~3 % per run."""
    kernels = []
    for i in range(n):
        name = f"void flash_fwd_kernel<cutlass::half_t, {64 + i % 7 * 32}, {i}>(Params)"
        nbytes = 1e6 * (1 + i % 97)
        kernels.append(
            KernelRecord(
                name=name,
                key=f"flash_fwd_kernel<{i}>",
                launches=1 + i % 5,
                duration_s=nbytes / 2.5e12 * rng.gauss(1.0, 0.03),
                flops={"tensor_fp16": nbytes * (2 + i % 300)},
                bytes={"dram": nbytes, "l2": 2 * nbytes},
            )
        )
    return kernels


def make_run(n: int, kernels: int, *, kind: str = "nightly", tag: str = "") -> RunRecord:
    """Nightly run number ``n`` (or a PR run with ``kind="pr"``)."""
    rng = random.Random(f"{n}{tag}")
    return RunRecord(
        repo=REPO,
        commit=f"{tag}{n:040x}"[-40:],
        branch="main" if kind == "nightly" else "pr",
        kind=RunKind(kind),
        pull_request=1 if kind == "pr" else None,
        timestamp=START + timedelta(days=n),
        device=DeviceInfo(name="NVIDIA H100 80GB HBM3"),
        profiler=ProfilerInfo(tool="ncu"),
        kernels=tuple(make_kernels(kernels, rng)),
    )


def ingest(engine: sa.Engine, run: RunRecord) -> None:
    """The store's ingest: placement + one transaction."""
    placements = place_run(run, ROOF)
    with session_scope(engine) as session:
        ingest_run(session=session, run=run, placements=placements, roof=ROOF)


def ingest_orm_per_row(engine: sa.Engine, run: RunRecord) -> None:
    """Reference: the same rows, one ORM object per measurement."""
    placements = place_run(run, ROOF)
    with session_scope(engine) as session:
        rid = repo_id(session=session, repo=REPO, create=True)
        assert rid is not None
        ids = kernel_ids(session=session, repo_id=rid, kernels={k.key: k.name for k in run.kernels})
        row = Run(
            repo_id=rid,
            device_id=1,
            kind="pr",
            timestamp=run.timestamp,
            roof_source="x",
            roof_label="x",
            content_hash=uuid.uuid4().hex,
            record_json=run.model_dump_json(),
        )
        session.add(row)
        session.flush()
        assert row.id is not None
        for k in run.kernels:
            values = measurement_row(
                k, placements[k.key], run_id=row.id, kernel_id=ids[k.key], roof_source="datasheet"
            )
            session.add(Measurement(**values))


def baseline(engine: sa.Engine, keys: list[str], window: int, keep: bool = False) -> pd.DataFrame:
    """The store's baseline read for all kernels of the run (``keep``: as a check, kept)."""
    with session_scope(engine, readonly=not keep) as session:
        query = BaselineQuery(
            repo=REPO,
            device=ROOF.device,
            roof_source="datasheet",
            base_branch="main",
            window=window,
            kernel_keys=keys,
            keep_columns=keep,
        )
        return read_baseline(session=session, query=query).frame


def forget_columns(engine: sa.Engine) -> None:
    """Delete the runs' kept columns (``service.store.columnar``): reads go to the rows."""
    with engine.begin() as conn:
        conn.execute(sa.delete(table_of(RunColumns)))


def baseline_single_join(engine: sa.Engine, window: int) -> pd.DataFrame:
    """Reference: one join query read with pandas.read_sql."""
    sql = sa.text(
        'SELECT r.id AS run_id, r."commit", r.timestamp, r.kind, k.key AS kernel_key, '
        "k.name AS kernel_name, m.percent_of_roof, m.regime, m.binding, m.time_s, m.total_flops,"
        " m.bytes_dram, m.bytes_l2, m.bytes_l1, r.driver, r.clock_control, r.cache_control "
        "FROM measurements m JOIN kernels k ON k.id = m.kernel_id JOIN runs r ON r.id = m.run_id "
        "WHERE r.id IN (SELECT id FROM runs WHERE branch = 'main' AND kind = 'nightly' "
        "ORDER BY timestamp DESC LIMIT :window)"
    )
    with engine.connect() as conn:
        return pd.read_sql(sql, conn, params={"window": window})


def timed(fn: Callable[[], object], repeat: int) -> float:
    """Best wall time of ``repeat`` calls (the least disturbed by other processes on the box)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


@contextmanager
def backend(name: str, postgres_url: str | None) -> Iterator[str]:
    """A fresh database URL for ``name`` (dropped afterwards)."""
    if name == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            yield f"sqlite:///{tmp}/history.db"
        return
    if not postgres_url:
        raise SystemExit("postgres: give --postgres-url or set ROOFGUARD_TEST_POSTGRES_URL")
    db = f"roofguard_bench_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{db}"')
    try:
        yield sa.engine.make_url(postgres_url).set(database=db).render_as_string(False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        admin.dispose()


def measure(engine: sa.Engine, length: int, args: argparse.Namespace) -> dict[str, object]:
    """Time the store's share of one check, and the references, at this history length."""
    pr_runs = iter(
        [make_run(length, args.kernels, kind="pr", tag=f"p{i}") for i in range(args.repeat)]
    )
    orm_runs = iter(
        [make_run(length, args.kernels, kind="pr", tag=f"o{i}") for i in range(args.repeat)]
    )
    keys = [k.key for k in make_run(length, args.kernels).kernels]
    t_ingest = timed(lambda: ingest(engine, next(pr_runs)), args.repeat)
    forget_columns(engine)
    t_base90 = timed(lambda: baseline(engine, keys, 90), args.repeat)
    t_base_all = timed(lambda: baseline(engine, keys, length), args.repeat)
    baseline(engine, keys, 90, keep=True)  # as the nightly check keeps them
    t_columns = timed(lambda: baseline(engine, keys, 90), args.repeat)
    t_join = timed(lambda: baseline_single_join(engine, 90), args.repeat)
    t_orm = timed(lambda: ingest_orm_per_row(engine, next(orm_runs)), args.repeat)
    return {
        "history runs": length,
        "stored measurements": length * args.kernels,
        "ingest PR run": t_ingest,
        "baseline (window 90)": t_base90,
        "baseline from kept columns (90)": t_columns,
        "store share of check": t_ingest + t_columns,
        "baseline (window = all)": t_base_all,
        "ref: orm-per-row ingest": t_orm,
        "ref: single-join read (90)": t_join,
        "baseline rows": len(baseline(engine, keys, 90)),
    }


def bench_backend(name: str, args: argparse.Namespace) -> list[dict[str, object]]:
    """Grow the history to each length and time the store's share of a check there."""
    rows: list[dict[str, object]] = []
    with backend(name, args.postgres_url) as url:
        engine = open_store(url)
        stored, fill_s = 0, 0.0
        for length in args.lengths:
            t0 = time.perf_counter()
            for n in range(stored, length):
                ingest(engine, make_run(n, args.kernels))
            fill_s, stored = fill_s + time.perf_counter() - t0, length
            row = {"backend": name, **measure(engine, length, args)}
            rows.append({**row, "nightly ingest (mean)": fill_s / length})
            print(rows[-1], file=sys.stderr, flush=True)
        engine.dispose()
    return rows


def markdown(rows: list[dict[str, object]]) -> str:
    """The rows as a markdown table (seconds with 3 decimals)."""
    head = list(rows[0])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [
            f"{v:.3f}" if isinstance(v, float) else f"{v:,}" if isinstance(v, int) else str(v)
            for v in row.values()
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    """Parse arguments, run every backend, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--lengths", default="30,90,180,365", type=lambda s: [int(x) for x in s.split(",")]
    )
    parser.add_argument("--kernels", type=int, default=2000)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--postgres-url", default=os.environ.get("ROOFGUARD_TEST_POSTGRES_URL"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    load_before = os.getloadavg()
    rows = [row for name in args.backends.split(",") for row in bench_backend(name, args)]
    print(markdown(rows))
    print(
        f"\nload average (1/5/15 min) before: {load_before}, after: {os.getloadavg()}; "
        f"{os.cpu_count()} CPUs"
    )


if __name__ == "__main__":
    main()
