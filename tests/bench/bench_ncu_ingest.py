"""Benchmark: ingest a generated ncu raw-page CSV (20,000 launches x 150 metrics).

Run as ``python tests/bench/bench_ncu_ingest.py [--launches N] [--metrics M] [--repeat R]``.
Side by side in the same run: a bare ``pandas.read_csv`` of the same file (the reference).
Goal: ingest within 1.5x of the bare read's time, and peak memory within 3x of the file size.

Time is the best of ``--repeat`` runs, each in-process without tracing; peak memory is measured
in separate runs under ``tracemalloc`` (Python and numpy allocations made while reading).
"""

from __future__ import annotations

import argparse
import csv
import gc
import random
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pandas as pd

import collectors
from collectors.ncu import frames

FIXED = [
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
]
OP = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum.per_cycle_elapsed"
#: The roofline metrics a ``--set roofline``-like export carries (name, unit).
ROOFLINE = [
    ("gpu__time_duration.sum", "ns"),
    ("smsp__cycles_elapsed.avg.per_second", "hz"),
    ("sm__cycles_elapsed.avg.per_second", "hz"),
    ("dram__cycles_elapsed.avg.per_second", "hz"),
    ("dram__bytes_read.sum", "byte"),
    ("dram__bytes_write.sum", "byte"),
    ("lts__t_sectors.sum", "sector"),
    ("l1tex__t_bytes.sum.per_second", "byte/s"),
    ("dram__bytes.sum.peak_sustained", "byte/cycle"),
    ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained", "inst/cycle"),
    *((OP.format(op), "inst/cycle") for op in ("fadd", "fmul", "ffma", "dadd", "dmul", "dfma")),
    ("sm__ops_path_tensor_src_fp16_dst_fp32.sum", ""),
    ("sm__ops_path_tensor_src_bf16_dst_fp32.sum", ""),
]


def generate(path: Path, launches: int, metrics: int, seed: int = 1) -> None:
    """Write a raw page: header, units row, one row per launch (10 kernels)."""
    rng = random.Random(seed)
    filler = [
        (f"sm__inst_executed_pipe_unit{i}.avg.pct_of_peak_sustained_active", "%")
        for i in range(metrics - len(ROOFLINE))
    ]
    columns = ROOFLINE + filler
    kernels = [
        f"void kernel_{k}<float, (int){k * 32}>(float *, const float *, int)" for k in range(10)
    ]
    with path.open("w", newline="", encoding="utf-8") as handle:
        handle.write("==PROF== Connected to process 4242 (/usr/bin/app)\n")
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(FIXED + [name for name, _ in columns])
        writer.writerow([""] * len(FIXED) + [unit for _, unit in columns])
        for launch in range(launches):
            fixed = [
                str(launch),
                "4242",
                "app",
                "127.0.0.1",
                kernels[launch % 10],
                "1",
                "7",
                "(256, 1, 1)",
                "(1024, 1, 1)",
                "0",
                "9.0",
            ]
            values = [f"{rng.uniform(1, 1e6):.2f}" for _ in columns]
            writer.writerow(fixed + values)


def best_time(func: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def peak_bytes(func: Callable[[], object]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _refuse(*args: object, **kwargs: object) -> None:
    raise frames.Fallback("--careful")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=20_000)
    parser.add_argument("--metrics", type=int, default=150)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--careful",
        action="store_true",
        help="measure the row-by-row reader (what files with separators or bad cells take)",
    )
    args = parser.parse_args()
    if args.careful:
        frames.read = _refuse  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "raw.csv"
        generate(path, args.launches, args.metrics)
        size = path.stat().st_size
        ingest = lambda: collectors.collect(path)  # noqa: E731
        bare = lambda: pd.read_csv(path, skiprows=[0, 2])  # noqa: E731 - prelude and units rows
        record = ingest()
        assert sum(k.launches for k in record.kernels) == args.launches
        t_ingest, t_bare = best_time(ingest, args.repeat), best_time(bare, args.repeat)
        m_ingest, m_bare = peak_bytes(ingest), peak_bytes(bare)
    mb = 1e6
    print(f"file: {args.launches} launches x {args.metrics} metrics, {size / mb:.1f} MB")
    print(f"{'':22}{'time s':>9}{'launches/s':>13}{'peak MB':>10}{'peak/file':>11}")
    for label, seconds, peak in (
        ("roofguard ingest", t_ingest, m_ingest),
        ("pandas.read_csv", t_bare, m_bare),
    ):
        rate = args.launches / seconds
        print(f"{label:22}{seconds:9.3f}{rate:13,.0f}{peak / mb:10.1f}{peak / size:11.2f}")
    print(
        f"ingest / bare read time: {t_ingest / t_bare:.2f}x (goal <= 1.5x); "
        f"ingest peak / file size: {m_ingest / size:.2f}x (goal <= 3x)"
    )


if __name__ == "__main__":
    main()
