"""End-to-end benchmark of ``roofguard check`` (a script, not a test).

A 2,000-kernel pull-request run (roofguard JSON on disk) is checked against a history of
nightly runs of the same 2,000 kernels that grows 30 -> 90 -> 180 runs (90 runs = 180,000
stored measurements), on SQLite and on PostgreSQL. Timed, best of ``--repeat``:

* ``nightly check``: the newest night checked as the nightly job does (judged by the nightly
  gate, which also stores the levels the next PR is judged against, ``rules.levelstore``);
* ``check``: what the PR command does after start-up: read the file, ingest it (one
  transaction), read the baseline and the stored levels, run every rule, render the markdown;
* ``check, levels not stored``: the same with the stored levels deleted first, so the gate
  computes every kernel's level (the reference: every PR check did this before the store);
* ``roofguard check`` process: the PR check through the real command line in a fresh Python
  process (start-up and imports included: what a CI step waits for);
* ``reference``: reading and placing the same file alone (``collect`` + ``place_run``), the
  floor any checker pays, measured in the same process right before.

Usage::

    python tests/bench/bench_check.py [--lengths 30,90,180] [--kernels 2000]
        [--backends sqlite,postgres] [--postgres-url URL] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from collectors import collect
from collectors.schema import DeviceInfo, KernelRecord, ProfilerInfo, RunKind, RunRecord
from rules.hardware import builtin_catalog
from rules.placement import place_run
from service.config import RoofguardConfig
from service.pipeline.check import check_run
from service.pipeline.reading import collect_run
from service.pipeline.runmeta import RunMeta
from service.store.db import open_store, session_scope
from service.store.ingest import ingest_run
from service.store.tables import GateLevel, table_of

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_store import backend as scratch_database
from bench_store import timed

REPO = "bench/llm"
ROOF = builtin_catalog().lookup("H100-SXM5").roof()
#: The first night, far enough back that the longest history and the PR are in the past
#: (``check`` refuses runs from the future).
START = datetime.now(UTC) - timedelta(days=400)


def kernels(n: int, rng: random.Random) -> tuple[KernelRecord, ...]:
    """``n`` memory- and compute-bound kernels; times jitter by ~2 % per run."""
    out = []
    for i in range(n):
        nbytes = 1e6 * (1 + i % 97)
        flops = nbytes * (0.5 if i % 3 else 400.0)
        roof_t = max(nbytes / 3.35e12, flops / 989.4e12)
        out.append(
            KernelRecord(
                name=f"void kernel_{i}<cutlass::bfloat16_t, {64 + i % 7 * 32}>(Params)",
                key=f"kernel_{i}<cutlass::bfloat16_t, {64 + i % 7 * 32}>",
                duration_s=roof_t / 0.8 * rng.lognormvariate(0, 0.02),
                flops={"tensor_bf16": flops},
                bytes={"dram": nbytes},
            )
        )
    return tuple(out)


def run_record(n: int, night: int, rng: random.Random, kind: RunKind) -> RunRecord:
    return RunRecord(
        repo=REPO,
        commit=f"{night:040x}",
        branch="main" if kind == RunKind.NIGHTLY else "pr",
        kind=kind,
        pull_request=None if kind == RunKind.NIGHTLY else 1,
        timestamp=START + timedelta(days=night),
        device=DeviceInfo(name="NVIDIA H100 80GB HBM3"),
        profiler=ProfilerInfo(tool="ncu"),
        kernels=kernels(n, rng),
    )


def grow_history(url: str, start: int, stop: int, n: int, rng: random.Random) -> None:
    engine = open_store(url)
    for night in range(start, stop):
        run = run_record(n, night, rng, RunKind.NIGHTLY)
        with session_scope(engine) as session:
            ingest_run(session=session, run=run, placements=place_run(run, ROOF), roof=ROOF)
    engine.dispose()


def check_nightly(url: str, run: RunRecord, config: RoofguardConfig) -> float:
    """Check nightly ``run`` as the nightly job does; its wall time."""
    engine = open_store(url)
    start = time.perf_counter()
    with session_scope(engine) as session:
        check_run(session=session, run=run, config=config)
    elapsed = time.perf_counter() - start
    engine.dispose()
    return elapsed


def forget_levels(url: str) -> None:
    """Delete the stored levels (the next check computes them all)."""
    engine = open_store(url)
    with engine.begin() as conn:
        conn.execute(sa.delete(table_of(GateLevel)))
    engine.dispose()


def check_once(url: str, report: Path, config: RoofguardConfig, tag: int) -> None:
    meta = RunMeta(repo=REPO, commit=f"pr{tag:038x}", branch="pr", pull_request=1)
    run = collect_run([report], meta=meta, config=config)
    engine = open_store(url)
    with session_scope(engine) as session:
        check_run(session=session, run=run, config=config)
    engine.dispose()


def timed_after(setup: Callable[[], object], fn: Callable[[], object], repeat: int) -> float:
    """Best wall time of ``repeat`` calls of ``fn``, each after an untimed ``setup``."""
    times = []
    for _ in range(repeat):
        setup()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def check_process(url: str, report: Path, tag: int) -> None:
    args = [
        sys.executable,
        "-m",
        "service",
        "check",
        str(report),
        "--repo",
        REPO,
        "--commit",
        f"cli{tag:037x}",
        "--pr",
        "1",
        "--device",
        "H100-SXM5",
        "--db",
        url,
        "--format",
        "json",
        "--output",
        os.devnull,
    ]
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    if proc.returncode not in (0, 1):
        raise SystemExit(proc.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", default="30,90,180")
    parser.add_argument("--kernels", type=int, default=2000)
    parser.add_argument("--backends", default="sqlite,postgres")
    default_pg = "postgresql+psycopg://root@127.0.0.1:5432/test"
    parser.add_argument(
        "--postgres-url", default=os.environ.get("ROOFGUARD_TEST_POSTGRES_URL", default_pg)
    )
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(7)
    config = RoofguardConfig(device="H100-SXM5")
    lengths = [int(x) for x in args.lengths.split(",")]
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    header = [
        "backend",
        "nightly runs",
        "stored measurements",
        "nightly check (s)",
        "check (s)",
        "check, levels not stored (s)",
        "`roofguard check` process (s)",
        "reference (s)",
    ]
    print("| " + " | ".join(header) + " |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "pr.json"
        pr = run_record(args.kernels, max(lengths), rng, RunKind.PR)  # the night after the last
        report.write_text(pr.model_dump_json())
        for backend in args.backends.split(","):
            with scratch_database(backend, args.postgres_url) as url:
                have, tag = 0, 0
                for length in lengths:
                    grow_history(url, have, length - 1, args.kernels, rng)
                    nightly = check_nightly(
                        url, run_record(args.kernels, length - 1, rng, RunKind.NIGHTLY), config
                    )
                    have = length
                    ref = timed(lambda: place_run(collect(report), ROOF), args.repeat)
                    tags = iter(range(tag, tag + 3 * args.repeat))
                    t = timed(lambda t=tags: check_once(url, report, config, next(t)), args.repeat)
                    cli = timed(lambda t=tags: check_process(url, report, next(t)), args.repeat)
                    cold = timed_after(
                        lambda: forget_levels(url),
                        lambda t=tags: check_once(url, report, config, next(t)),
                        args.repeat,
                    )
                    tag += 3 * args.repeat
                    print(
                        f"| {backend} | {length} | {length * args.kernels:,} | {nightly:.2f} "
                        f"| {t:.2f} | {cold:.2f} | {cli:.2f} | {ref:.2f} |"
                    )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
