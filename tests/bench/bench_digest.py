"""Benchmark: the weekly digest over one year of nightly history on PostgreSQL.

2,000 kernels x 4 devices x 365 nights (2.92 million measurements) are written with COPY into a
scratch database (``roofguard_bench_digest``, dropped at the end), with planted level changes
(regressions, some of which recover, and improvements) on 1 % of the series. Then the digest of
the last week is built with change points over the whole year, exactly as ``roofguard digest``
does it: ``nightly_history`` from the store, ``build_digest``, markdown and JSON.

As a reference, run in the same process, the single-series API ``rules.stats.change_points``
(one Python call per series) is timed on a sample of series and extrapolated to all of them.

Run:  ROOFGUARD_BENCH_POSTGRES_URL=postgresql+psycopg://root@127.0.0.1:5432/test \
      python tests/bench/bench_digest.py   [--kernels 2000 --nights 365]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import resource
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rules.stats import change_points
from service.digest.build import build_digest, prepare_history
from service.digest.model import DigestOptions
from service.render.digest_render import render_digest_json, render_digest_markdown
from service.store.db import make_engine, migrate, session_scope
from service.store.history import nightly_history

DB_NAME = "roofguard_bench_digest"
DEVICES = ("H100-SXM5", "A100-SXM4-80GB", "H200-SXM", "B200")
REPO = "acme/kernels"
END = datetime(2026, 11, 29, 23, 0, tzinfo=UTC)
PLANTED_SHARE = 0.01
SEED = 2026


@contextmanager
def timed(label: str, figures: dict[str, float]) -> Iterator[None]:
    start = time.perf_counter()
    yield
    figures[label] = time.perf_counter() - start
    print(f"  {label:<34}{figures[label]:8.2f} s", flush=True)


@contextmanager
def scratch_database(base_url: str) -> Iterator[str]:
    admin = sa.create_engine(base_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)'))
        conn.execute(sa.text(f'CREATE DATABASE "{DB_NAME}"'))
    url = sa.engine.make_url(base_url).set(database=DB_NAME).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)'))
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
    engine: sa.Engine, kernels: int, stamps: pd.DatetimeIndex
) -> tuple[np.ndarray, list[int]]:
    """Repository, devices, kernels and runs through SQLAlchemy; returns run and kernel ids."""
    meta = sa.MetaData()
    meta.reflect(engine, only=["repositories", "devices", "kernels", "runs"])
    t = meta.tables
    now = datetime.now(UTC)
    with engine.begin() as conn:
        repo_id = conn.execute(
            sa.insert(t["repositories"]).returning(t["repositories"].c.id),
            {"name": REPO, "created_at": now},
        ).scalar_one()
        device_rows = [{"name": d, "created_at": now} for d in DEVICES]
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
        runs = [
            {
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
            for n, stamp in enumerate(stamps)
            for d, (did, name) in enumerate(zip(device_ids, DEVICES, strict=True))
        ]
        ids = conn.execute(sa.insert(t["runs"]).returning(t["runs"].c.id), runs).scalars().all()
        kernel_ids = (
            conn.execute(sa.select(t["kernels"].c.id).order_by(t["kernels"].c.id)).scalars().all()
        )
    return np.asarray(ids), list(kernel_ids)  # night-major, device-minor


def measurements(
    runs: np.ndarray, kernel_ids: list[int], factors: np.ndarray, rng: np.random.Generator
) -> pd.DataFrame:
    """Every measurement as a frame in the measurements table's columns (vectorised)."""
    k, d, n = len(kernel_ids), len(DEVICES), factors.shape[1]
    base = rng.uniform(20, 90, size=k * d)
    pct = base[:, None] * factors * (1 + 0.01 * rng.standard_normal(factors.shape))
    series = np.repeat(np.arange(k * d), n)  # series = device * k + kernel
    night = np.tile(np.arange(n), k * d)
    run_ids = runs[night * d + series // k]
    memory = (np.arange(k)[series % k] % 5) < 3
    return pd.DataFrame(
        {
            "run_id": run_ids,
            "kernel_id": np.asarray(kernel_ids)[series % k],
            "launches": 1,
            "time_s": 1e-3 * 50.0 / pct.ravel(),
            "flops_json": '{"tensor_bf16": 1e9}',
            "total_flops": 1e9,
            "bytes_dram": 2e8,
            "percent_of_roof": pct.ravel(),
            "regime": np.where(memory, "memory-bound", "compute-bound"),
            "binding": np.where(memory, "dram", "tensor_bf16"),
            "borderline": False,
            "intensity_dram": 5.0,
            "t_roof_s": 5e-4,
            "roof_source": "datasheet",
        }
    )


def copy_measurements(url: str, frame: pd.DataFrame) -> None:
    """COPY the frame into ``measurements`` in chunks of CSV text (psycopg, no per-row SQL)."""
    import psycopg

    dsn = sa.engine.make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    columns = ", ".join(frame.columns)
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        with cur.copy(f"COPY measurements ({columns}) FROM STDIN WITH (FORMAT csv)") as copy:
            for start in range(0, len(frame), 250_000):
                buffer = io.StringIO()
                frame.iloc[start : start + 250_000].to_csv(buffer, header=False, index=False)
                copy.write(buffer.getvalue())
        cur.execute("ANALYZE")


def load(url: str, kernels: int, nights: int, figures: dict[str, float]) -> pd.DataFrame:
    rng = np.random.default_rng(SEED)
    stamps = pd.date_range(end=END.replace(hour=2), periods=nights, freq="D")
    engine = make_engine(url)
    with timed("migrate + dimensions", figures):
        migrate(engine)
        runs, kernel_ids = insert_dimensions(engine, kernels, stamps)
    factors, planted = plant(kernels * len(DEVICES), nights, rng)
    with timed("generate measurements", figures):
        frame = measurements(runs, kernel_ids, factors, rng)
    with timed(f"COPY {len(frame):,} measurements", figures):
        copy_measurements(url, frame)
    engine.dispose()
    return planted


def run_digest(url: str, nights: int, figures: dict[str, float]) -> tuple[object, pd.DataFrame]:
    start = END - timedelta(days=7)
    options = DigestOptions(lookback_days=nights)
    engine = make_engine(url)
    total = time.perf_counter()
    window = {
        "repo": REPO,
        "start": END - timedelta(days=nights + 1),
        "end": END + timedelta(microseconds=1),
    }
    with timed("nightly_history (store -> frame)", figures), session_scope(engine) as session:
        history = nightly_history(session=session, **window)
    with timed("build_digest (change points, year)", figures):
        digest = build_digest(history, start=start, end=END, repo=REPO, options=options)
    with timed("render markdown + JSON", figures):
        markdown, data = render_digest_markdown(digest), render_digest_json(digest)
    figures["digest total"] = time.perf_counter() - total
    print(
        f"  {'digest total':<34}{figures['digest total']:8.2f} s   ({len(history):,} rows, "
        f"markdown {len(markdown):,} chars, JSON {len(data):,} chars)"
    )
    engine.dispose()
    return digest, history


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
    from service.digest.build import detect_changes

    frame = prepare_history(history)
    changes, _ = detect_changes(frame, DigestOptions())
    stamps = sorted(frame["timestamp"].unique())
    found = {
        (int(s), stamps.index(t)) for s, t in zip(changes["series"], changes["since"], strict=True)
    }
    # Series numbers follow (device, kernel) sorted by name; planted ones are device-major too.
    order = frame.drop_duplicates("series")[["series", "device", "kernel_key"]]
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
    with scratch_database(base) as url:
        planted = load(url, args.kernels, args.nights, figures)
        digest, history = run_digest(url, args.nights, figures)
    reference(history, figures)
    check(digest, planted, history, args.nights)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  peak RSS {peak:,.0f} MiB; goal: digest total under 30 s")


if __name__ == "__main__":
    main()
