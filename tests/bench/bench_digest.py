"""Benchmark: the weekly digest over nightly history on PostgreSQL, up to a fleet's 2.5 years.

KERNELS x 4 devices x NIGHTS measurements (default 2,000 x 4 x 365 = 2.92 M; the goal's scale
is ``--kernels 8000 --nights 913``, 29.2 M) are generated with numpy, packed as PostgreSQL
binary COPY rows, COPYed into a staging table and inserted into ``measurements`` in one
statement, in a database of the bench's own (``roofguard_bench_digest_KxN``), kept between
runs because loading 29 M rows takes minutes (``--fresh`` rebuilds it, ``--drop`` removes it).
1 % of the series hold planted level changes (regressions, some of which recover, and
improvements). Then the digest of the last week is built with change points over the whole
history, in a fresh process (its peak RSS is the digest's own): ``digest_history`` (the
digest's columns, in batches of runs, compact types), ``build_digest``, markdown and JSON.
``--old-read`` also times ``nightly_history`` (every history column), the read it replaces;
both print the JSON's hash, which must agree.

``--new-card`` adds a fifth card whose runs start four nights before the end (its own
database): the digest then judges a device change, as ``roofguard digest`` does, from the
compact history (``service.digest.rowread``).

As a reference, in the same process, the single-series API ``rules.stats.change_points``
(one Python call per series) is timed on a sample of series and extrapolated to all of them.

Run:  ROOFGUARD_BENCH_POSTGRES_URL=postgresql+psycopg://root@127.0.0.1:5432/test \
      python tests/bench/bench_digest.py   [--kernels 2000 --nights 365] [--old-read]
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import os
import resource
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from itertools import chain
from pathlib import Path

import numpy as np
import pandas as pd
import sqlalchemy as sa
from sqlalchemy import Engine

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rules.stats import change_points
from service.digest.build import build_digest, prepare_history
from service.digest.devices import judge_card
from service.digest.model import DigestOptions
from service.digest.rowread import CardRows, compact_card_rows
from service.digest.storeread import compact_history
from service.digest.workers import Workers, usable_cores
from service.render.digest_render import render_digest_json, render_digest_markdown
from service.store.db import make_engine, migrate, session_scope
from service.store.digestread import digest_history
from service.store.history import nightly_history
from service.store.memory import give_back_freed, map_large_allocations

DB_NAME = "roofguard_bench_digest"
DEVICES = ("H100-SXM5", "A100-SXM4-80GB", "H200-SXM", "B200")
#: ``--new-card``: a fifth card whose nightly runs start in the digest's week (a runner moved
#: to new hardware), so the digest has a device change to judge against the card before it.
NEW_CARD = "GH200-96GB"
NEW_CARD_NIGHTS = 4
REPO = "acme/kernels"
END = datetime(2026, 11, 29, 23, 0, tzinfo=UTC)
PLANTED_SHARE = 0.01
SEED = 2026


def cpu_seconds() -> float:
    """CPU seconds of this process and of the workers it has waited for (the scan's)."""
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + workers.ru_utime + workers.ru_stime


@contextmanager
def timed(label: str, figures: dict[str, float]) -> Iterator[None]:
    """Wall and CPU seconds, workers' included (on a loaded box the CPU time is the steadier)."""
    start, cpu = time.perf_counter(), cpu_seconds()
    yield
    figures[label] = time.perf_counter() - start
    used = cpu_seconds() - cpu
    print(f"  {label:<34}{figures[label]:8.2f} s   (CPU {used:.2f} s)", flush=True)


def database(
    base_url: str, kernels: int, nights: int, fresh: bool, new_card: bool = False
) -> tuple[str, bool]:
    """The bench's own database for this size, and whether it is already loaded (cached).

    Loading 29 M measurements takes minutes, so a loaded database is kept between runs
    (``--fresh`` rebuilds it, ``--drop`` removes it at the end).
    """
    name = f"{DB_NAME}_{kernels}x{nights}" + ("_newcard" if new_card else "")
    url = sa.engine.make_url(base_url).set(database=name).render_as_string(hide_password=False)
    admin = sa.create_engine(base_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        exists = conn.execute(
            sa.text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name}
        ).scalar()
    loaded = False
    if exists and not fresh:
        probe = sa.create_engine(url)
        with probe.connect() as conn:
            loaded = bool(conn.execute(sa.text("SELECT to_regclass('bench_loaded')")).scalar())
        probe.dispose()
    if not loaded:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return url, loaded


def drop_database(base_url: str, url: str) -> None:
    name = sa.engine.make_url(url).database
    admin = sa.create_engine(base_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def plant(n_series: int, nights: int, rng: np.random.Generator) -> tuple[np.ndarray, pd.DataFrame]:
    """Level factors (series x nights) with planted steps, and the table of what was planted."""
    factors = np.ones((n_series, nights))
    chosen = rng.choice(n_series, size=int(n_series * PLANTED_SHARE), replace=False)
    rows = []
    for i, series in enumerate(chosen):  # ~80 planted series, not per point
        # One in ten lands in the digest's week (held at least two nights), the rest anywhere.
        night = nights - 6 + i % 4 if i % 10 == 0 else int(rng.integers(30, nights - 10))
        factor = 0.8 if i % 3 else 1.15
        until = int(min(nights, night + rng.integers(20, 60))) if i % 4 == 1 else nights
        factors[series, night:until] *= factor
        rows.append((int(series), night, factor, until))
    return factors, pd.DataFrame(rows, columns=["series", "night", "factor", "until"])


def insert_dimensions(
    engine: sa.Engine, kernels: int, stamps: pd.DatetimeIndex, new_card: bool = False
) -> tuple[np.ndarray, list[int], np.ndarray]:
    """Repository, devices, kernels and runs through SQLAlchemy; returns run and kernel ids.

    The third array holds the new card's runs (its last ``NEW_CARD_NIGHTS`` nights), if any.
    """
    names = (*DEVICES, NEW_CARD) if new_card else DEVICES
    meta = sa.MetaData()
    meta.reflect(engine, only=["repositories", "devices", "kernels", "runs"])
    t = meta.tables
    now = datetime.now(UTC)
    with engine.begin() as conn:
        repo_id = conn.execute(
            sa.insert(t["repositories"]).returning(t["repositories"].c.id),
            {"name": REPO, "created_at": now},
        ).scalar_one()
        device_rows = [{"name": d, "created_at": now} for d in names]
        device_ids = (
            conn.execute(sa.insert(t["devices"]).returning(t["devices"].c.id), device_rows)
            .scalars()
            .all()
        )
        keys = [f"kernel_{i:04d}" for i in range(kernels)]
        conn.execute(
            sa.insert(t["kernels"]),
            [
                {
                    "repo_id": repo_id,
                    "key": k,
                    "key_hash": hashlib.sha256(k.encode()).hexdigest(),
                    "name": k,
                }
                for k in keys
            ],
        )
        cards = list(enumerate(zip(device_ids, names, strict=True)))
        runs = [
            run_row(repo_id, n, d, did, name, stamp, now)
            for n, stamp in enumerate(stamps)
            for d, (did, name) in cards[: len(DEVICES)]
        ]
        later = len(stamps) - NEW_CARD_NIGHTS
        runs += [
            run_row(repo_id, n, d, did, name, stamps[n], now)
            for n in range(later, len(stamps))
            for d, (did, name) in cards[len(DEVICES) :]
        ]
        ids = conn.execute(sa.insert(t["runs"]).returning(t["runs"].c.id), runs).scalars().all()
        kernel_ids = (
            conn.execute(sa.select(t["kernels"].c.id).order_by(t["kernels"].c.id)).scalars().all()
        )
    main = len(stamps) * len(DEVICES)  # night-major, device-minor; then the new card's
    return np.asarray(ids[:main]), list(kernel_ids), np.asarray(ids[main:])


def run_row(
    repo_id: int, n: int, d: int, did: int, name: str, stamp: pd.Timestamp, now: datetime
) -> dict[str, object]:
    """One nightly run of night ``n`` on card ``d``."""
    return {
        "repo_id": repo_id,
        "device_id": did,
        "commit": f"{n:04d}{d:02d}" + "a" * 34,
        "branch": "main",
        "kind": "nightly",
        "timestamp": stamp.to_pydatetime(),
        "roof_source": "datasheet",
        "roof_label": f"{name} (datasheet)",
        "roof_json": {},
        "trusted": True,
        "content_hash": f"{n:08d}{d:02d}",
        "record_json": "{}",
        "created_at": now,
    }


#: One measurement as PostgreSQL's binary COPY writes it (big-endian, field count and
#: lengths inline), so numpy packs a whole block of rows in one step.
_ROW = np.dtype(
    [
        ("fields", ">i2"),
        ("run_len", ">i4"),
        ("run_id", ">i4"),
        ("kernel_len", ">i4"),
        ("kernel_id", ">i4"),
        ("time_len", ">i4"),
        ("time_s", ">f8"),
        ("pct_len", ">i4"),
        ("percent_of_roof", ">f8"),
        ("memory_len", ">i4"),
        ("memory", "u1"),
    ]
)
_STAGE = "bench_stage (run_id int4, kernel_id int4, time_s float8, pct float8, memory bool)"
#: In run order, as a store fills (each upload adds one run's rows): generated night blocks
#: series by series, a run's rows lay on as many pages as it has kernels, and every read of
#: whole runs read the table many times over (0.76 s a batch of 32 runs, 1.25 GB of pages).
_FROM_STAGE = """
INSERT INTO measurements (run_id, kernel_id, launches, time_s, flops_json, total_flops,
    bytes_dram, percent_of_roof, regime, binding, borderline, intensity_dram, t_roof_s,
    roof_source)
SELECT run_id, kernel_id, 1, time_s, CAST('{"tensor_bf16": 1e9}' AS json), 1e9, 2e8, pct,
    CASE WHEN memory THEN 'memory-bound' ELSE 'compute-bound' END,
    CASE WHEN memory THEN 'dram' ELSE 'tensor_bf16' END, false, 5.0, 5e-4, 'datasheet'
FROM bench_stage ORDER BY run_id, kernel_id
"""
NIGHTS_PER_BLOCK = 30


def measurement_blocks(
    runs: np.ndarray, kernel_ids: list[int], factors: np.ndarray, rng: np.random.Generator
) -> Iterator[bytes]:
    """Every measurement, a block of nights at a time, as binary COPY rows (vectorised)."""
    k, d, n = len(kernel_ids), len(DEVICES), factors.shape[1]
    base = rng.uniform(20, 90, size=k * d)
    kernel_of = np.asarray(kernel_ids)[np.arange(k * d) % k]
    memory = (np.arange(k * d) % k % 5) < 3
    for first in range(0, n, NIGHTS_PER_BLOCK):
        nights = np.arange(first, min(n, first + NIGHTS_PER_BLOCK))
        noise = 1 + 0.01 * rng.standard_normal((k * d, nights.size))
        pct = base[:, None] * factors[:, nights] * noise  # series x nights
        rows = np.zeros(pct.size, dtype=_ROW)
        rows["fields"], rows["memory_len"] = 5, 1
        rows["run_len"] = rows["kernel_len"] = 4
        rows["time_len"] = rows["pct_len"] = 8
        series = np.repeat(np.arange(k * d), nights.size)  # series = device * k + kernel
        night = np.tile(nights, k * d)
        rows["run_id"] = runs[night * d + series // k]
        rows["kernel_id"] = kernel_of[series]
        rows["percent_of_roof"] = pct.ravel()
        rows["time_s"] = 1e-3 * 50.0 / pct.ravel()
        rows["memory"] = memory[series]
        yield rows.tobytes()


def new_card_blocks(
    runs: np.ndarray, kernel_ids: list[int], rng: np.random.Generator
) -> Iterator[bytes]:
    """The new card's nights (``--new-card``): every kernel, a tenth of them 30 % lower."""
    k = len(kernel_ids)
    base = rng.uniform(20, 90, size=k) * np.where(np.arange(k) % 10 == 7, 0.7, 1.0)
    for run in runs:
        pct = base * (1 + 0.01 * rng.standard_normal(k))
        rows = np.zeros(k, dtype=_ROW)
        rows["fields"], rows["memory_len"] = 5, 1
        rows["run_len"] = rows["kernel_len"] = 4
        rows["time_len"] = rows["pct_len"] = 8
        rows["run_id"] = run
        rows["kernel_id"] = kernel_ids
        rows["percent_of_roof"] = pct
        rows["time_s"] = 1e-3 * 50.0 / pct
        rows["memory"] = (np.arange(k) % 5) < 3
        yield rows.tobytes()


def copy_measurements(url: str, blocks: Iterator[bytes]) -> int:
    """COPY (binary) into a staging table, then one INSERT ... SELECT adds the constants."""
    import psycopg

    dsn = sa.engine.make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    total = 0
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        cur.execute(f"CREATE UNLOGGED TABLE {_STAGE}")
        with cur.copy("COPY bench_stage FROM STDIN WITH (FORMAT binary)") as copy:
            copy.write(b"PGCOPY\n\xff\r\n\x00" + bytes(8))
            for block in blocks:
                copy.write(block)
                total += len(block) // _ROW.itemsize
                if sys.stdout.isatty():  # a progress line on a terminal, none in a CI log
                    print(f"\r  staged {total:,} rows", end="", flush=True)
            copy.write(b"\xff\xff")
        print(f"\r  staged {total:,} rows")
        # Foreign keys checked row by row (an after-trigger each) took most of a 29 M load;
        # dropped for the INSERT and added back, they are checked in one pass.
        keys = cur.execute(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE conrelid = 'measurements'::regclass AND contype = 'f'"
        ).fetchall()
        for name, _ in keys:
            cur.execute(f'ALTER TABLE measurements DROP CONSTRAINT "{name}"')
        cur.execute(_FROM_STAGE)
        for name, definition in keys:
            cur.execute(f'ALTER TABLE measurements ADD CONSTRAINT "{name}" {definition}')
        cur.execute("DROP TABLE bench_stage")
        cur.execute("CREATE TABLE bench_loaded (rows bigint)")
        cur.execute("INSERT INTO bench_loaded VALUES (%s)", (total,))
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    return total


def load(
    url: str, kernels: int, nights: int, figures: dict[str, float], new_card: bool = False
) -> None:
    rng = np.random.default_rng(SEED)
    stamps = pd.date_range(end=END.replace(hour=2), periods=nights, freq="D")
    engine = make_engine(url)
    with timed("migrate + dimensions", figures):
        migrate(engine)
        runs, kernel_ids, new_runs = insert_dimensions(engine, kernels, stamps, new_card)
    factors, _ = plant(kernels * len(DEVICES), nights, rng)
    with timed("generate + COPY measurements", figures):
        blocks = measurement_blocks(runs, kernel_ids, factors, rng)
        copy_measurements(url, chain(blocks, new_card_blocks(new_runs, kernel_ids, rng)))
    engine.dispose()


def run_digest(
    url: str, nights: int, figures: dict[str, float], *, old_read: bool, new_card: bool = False
) -> tuple:
    """The digest as ``roofguard digest`` builds it; the read is ``digest_history`` (compact,
    in batches of runs) or, with ``old_read``, ``nightly_history`` (every history column).

    ``new_card``: as ``roofguard digest --json`` does, like for like (``compact_history``) and
    the device changes (``compact_card_rows``, ``judge_card``) of the card that started in
    the week.
    """
    start = END - timedelta(days=7)
    options = DigestOptions(lookback_days=nights, workers=usable_cores())  # as the command
    engine = make_engine(url)
    total, total_cpu = time.perf_counter(), cpu_seconds()
    window = {
        "repo": REPO,
        "start": END - timedelta(days=nights + 1),
        "end": END + timedelta(microseconds=1),
    }
    label = "nightly_history (every column)" if old_read else "digest_history (store -> frame)"
    with timed(label, figures), session_scope(engine) as session:
        if new_card and not old_read:
            history = compact_history(session, REPO, window["start"], window["end"], with_ids=True)
        else:
            read = nightly_history if old_read else digest_history
            history = read(session=session, **window)
    cards = _card_rows(engine, history, (start, END), figures) if new_card and not old_read else []
    # As the command: one pool for every stage, the cards judged in it while the build runs
    # (the pool is joined inside the timing, so its workers' CPU is counted).
    with timed("build_digest (change points)", figures), Workers(options.workers) as workers:
        judged = [workers.submit(judge_card, old, new) for old, new in cards]
        del cards
        digest = build_digest(
            history, start=start, end=END, repo=REPO, options=options, workers=workers
        )
        changes = [change for change in (j() for j in judged) if change is not None]
    if new_card and not old_read:
        print(f"  device changes: {[(c.from_device, c.to_device, c.kernels) for c in changes]}")
        digest = digest.model_copy(update={"device_changes": changes})
    with timed("render markdown + JSON", figures):
        markdown, data = render_digest_markdown(digest), render_digest_json(digest)
    figures["digest total"] = time.perf_counter() - total
    cpu = cpu_seconds() - total_cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"  {'digest total':<34}{figures['digest total']:8.2f} s   (CPU {cpu:.2f} s; "
        f"{len(history):,} rows, "
        f"markdown {len(markdown):,} chars, "
        f"JSON sha256 {hashlib.sha256(data.encode()).hexdigest()[:12]}); peak RSS {peak:,.0f} MiB",
        flush=True,
    )
    engine.dispose()
    return digest, history, data


def _card_rows(
    engine: Engine,
    history: pd.DataFrame,
    period: tuple[datetime, datetime],
    figures: dict[str, float],
) -> list[CardRows]:
    """As the command: the rows that judge each new card; then the ids go (charts' only)."""
    with timed("device changes: rows read", figures), session_scope(engine) as session:
        cards = compact_card_rows(session, history, period)
    del history["run_id"], history["kernel_id"]
    give_back_freed()
    return cards


def digest_process(url: str, kernels: int, nights: int, old_read: bool, new_card: bool) -> None:
    """One digest in a fresh process, so its peak memory is the digest's own."""
    map_large_allocations()  # as ``roofguard digest`` does (``service.store.memory``)
    figures: dict[str, float] = {}
    digest, history, _ = run_digest(url, nights, figures, old_read=old_read, new_card=new_card)
    _, planted = plant(kernels * len(DEVICES), nights, np.random.default_rng(SEED))
    if new_card:  # the planted changes are on the four cards that ran every night
        history = history[history["device"].isin(DEVICES)]
        history = history.assign(device=history["device"].astype(str).astype("category"))
    check(digest, planted, history, nights)
    if not old_read:
        reference(history, figures)


def reference(history: pd.DataFrame, figures: dict[str, float], sample: int = 400) -> None:
    """The per-series API on a sample of series, extrapolated to all series."""
    frame = prepare_history(history)
    n_series = int(frame["series"].max()) + 1
    sample = min(sample, n_series)
    chosen = np.linspace(0, n_series - 1, sample).astype(int)
    groups = dict(iter(frame[frame["series"].isin(chosen)].groupby("series")["percent_of_roof"]))
    begin = time.perf_counter()
    for series in chosen:  # the reference is per-series on purpose
        change_points(groups[series].to_numpy())
    per_series = (time.perf_counter() - begin) / sample
    figures["reference per-series (extrapolated)"] = per_series * n_series
    print(
        f"  {'reference: change_points per series':<34}{per_series * n_series:8.2f} s "
        f"(extrapolated from {sample} of {n_series} series)"
    )


def check(digest: object, planted: pd.DataFrame, history: pd.DataFrame, nights: int) -> None:
    """How many planted changes the year's scan found (recall) and how many it invented."""
    from service.digest.changes import detect_changes

    frame = prepare_history(history)
    changes, _ = detect_changes(frame, DigestOptions())
    stamps = sorted(frame["timestamp"].unique())
    found = {
        (int(s), stamps.index(t)) for s, t in zip(changes["series"], changes["since"], strict=True)
    }
    # Series numbers follow (device, kernel) sorted by name; planted ones are device-major too.
    order = frame.drop_duplicates("series")[["series", "device", "kernel_key"]].astype(
        {"device": str, "kernel_key": str}
    )
    device_rank = {d: i for i, d in enumerate(DEVICES)}
    kernels = frame["kernel_key"].nunique()
    planted_series = (
        order["device"].map(device_rank) * kernels + order["kernel_key"].str[7:].astype(int)
    ).to_numpy()
    to_frame = dict(zip(planted_series, order["series"], strict=True))
    expected = {(to_frame[s], n) for s, n in zip(planted["series"], planted["night"], strict=True)}
    expected |= {
        (to_frame[s], u)
        for s, u in zip(planted["series"], planted["until"], strict=True)
        if u < nights
    }
    print(
        f"  planted changes {len(expected)}, found {len(found & expected)}, "
        f"not planted {len(found - expected)}; {digest.headline}"
    )  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=2000)
    parser.add_argument("--nights", type=int, default=365)
    parser.add_argument("--fresh", action="store_true", help="rebuild the cached database")
    parser.add_argument("--drop", action="store_true", help="drop the database at the end")
    parser.add_argument(
        "--old-read", action="store_true", help="also time nightly_history (every column)"
    )
    parser.add_argument("--load-only", action="store_true", help="load the database, no digest")
    parser.add_argument(
        "--new-card",
        action="store_true",
        help=f"add a card ({NEW_CARD}) whose runs start in the week: a device change",
    )
    args = parser.parse_args()
    base = os.environ.get(
        "ROOFGUARD_BENCH_POSTGRES_URL", os.environ.get("ROOFGUARD_TEST_POSTGRES_URL", "")
    )
    if not base:
        sys.exit(
            "set ROOFGUARD_BENCH_POSTGRES_URL (e.g. postgresql+psycopg://root@127.0.0.1:5432/test)"
        )
    figures: dict[str, float] = {}
    print(
        f"digest benchmark: {args.kernels} kernels x {len(DEVICES)} devices x {args.nights} nights"
    )
    url, loaded = database(base, args.kernels, args.nights, args.fresh, args.new_card)
    if loaded:
        print("  (database cached from an earlier run: --fresh rebuilds it)")
    else:
        load(url, args.kernels, args.nights, figures, args.new_card)
    spawn = multiprocessing.get_context("spawn")
    for old_read in () if args.load_only else (False, True) if args.old_read else (False,):
        child = spawn.Process(
            target=digest_process,
            args=(url, args.kernels, args.nights, old_read, args.new_card),
        )
        child.start()
        child.join()
    if args.drop:
        drop_database(base, url)
    print("  goal: digest total under 60 s and 4 GB (29 M measurements)")


if __name__ == "__main__":
    main()
