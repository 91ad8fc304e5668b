"""Benchmark: collectors stay linear in kernels and bytes (Google Benchmark JSON, ncu raw CSV).

Run as ``python tests/bench/bench_collect_scale.py [--sizes 20000,100000,1000000]
[--formats gbench-json,ncu-csv-raw] [--readers columns,records,reference] [--gaps N]``. For
each size it generates a file with that many distinct kernels (one benchmark, or one launch,
each; ``--gaps N``: N ncu launches with ``n/a`` cells, half of them failed replays) and reads
it with ``collectors.collect_columns`` (the column reader of huge runs), with
``collectors.collect`` (a record per kernel) and, side by side in the same run, with the
reference: ``json.load`` for the JSON, ``pandas.read_csv`` for the CSV. Each read runs in a
fresh process, so its peak resident memory (``ru_maxrss``) is its own; the peak it adds over
the process after its imports, per kernel, is the memory goal's measure (<= 1 KB). Linear
means the time per kernel stays flat as the size grows tenfold; the reader's time over the
reference's says what reading costs beyond parsing.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIXED = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream"]
FIXED += ["Block Size", "Grid Size", "Device", "CC"]
METRICS = [
    ("gpu__time_duration.sum", "nsecond"),
    ("dram__bytes_read.sum", "byte"),
    ("dram__bytes_write.sum", "byte"),
    ("smsp__cycles_elapsed.avg.per_second", "hz"),
    ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst"),
    ("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "inst"),
]


def write_gbench(path: Path, kernels: int, seed: int = 1) -> None:
    """A Google Benchmark JSON file: one benchmark per kernel, with FLOP and byte counters."""
    rng = random.Random(seed)
    context = {
        "date": "2026-11-30T01:00:00+00:00",
        "host_name": "ci",
        "executable": "./bench",
        "library_build_type": "release",
        "gpu_name": "NVIDIA H100 80GB HBM3",
    }
    with path.open("w", encoding="utf-8") as out:
        out.write('{"context": ' + json.dumps(context) + ', "benchmarks": [\n')
        for index in range(kernels):
            entry = {
                "name": f"BM_gemm/{index}/{index % 97}/manual_time",
                "run_name": f"BM_gemm/{index}/{index % 97}/manual_time",
                "run_type": "iteration",
                "repetitions": 1,
                "repetition_index": 0,
                "iterations": 1000,
                "real_time": round(rng.uniform(5, 500), 3),
                "cpu_time": round(rng.uniform(5, 500), 3),
                "time_unit": "us",
                "flops_fp32": float(2 * index * 1024 + 1),
                "bytes_dram": float(64 * index + 64),
            }
            out.write(("," if index else "") + json.dumps(entry) + "\n")
        out.write("]}\n")


def write_ncu(path: Path, kernels: int, seed: int = 1, gaps: int = 0) -> None:
    """A compact ncu raw page: one launch per kernel, six roofline metrics.

    ``gaps`` launches, spread evenly, carry ``n/a`` cells as real reports do: every other
    one a failed replay (each cell n/a), the rest one counter ncu could not collect.
    """
    rng = random.Random(seed)
    every = kernels // gaps if gaps else 0
    with path.open("w", newline="", encoding="utf-8") as handle:
        handle.write("==PROF== Connected to process 4242 (/usr/bin/app)\n")
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(FIXED + [name for name, _ in METRICS])
        writer.writerow([""] * len(FIXED) + [unit for _, unit in METRICS])
        for launch in range(kernels):
            fixed = [str(launch), "4242", "app", "127.0.0.1", f"void kernel_{launch}(float *)"]
            fixed += ["1", "7", "(256, 1, 1)", "(1024, 1, 1)", "0", "9.0"]
            cells = [str(rng.randint(1_000, 10_000_000)) for _ in METRICS]
            if every and launch % every == every // 2:
                gap = launch // every
                cells = ["n/a"] * len(cells) if gap % 2 == 0 else [*cells[:-1], "n/a"]
            writer.writerow(fixed + cells)


WRITERS = {"gbench-json": write_gbench, "ncu-csv-raw": write_ncu}
REFERENCE = {"gbench-json": "json.load", "ncu-csv-raw": "pandas.read_csv"}


def _read_one(fmt: str, reader: str, path: str) -> None:
    """In the child: read ``path`` once, print seconds, peak RSS bytes and kernels found."""
    import pandas as pd

    import collectors

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # after the imports
    start, cpu_start = time.perf_counter(), _cpu()
    if reader == "columns":  # as ingest reads a huge run: the record path where it must
        try:
            kernels = collectors.collect_columns(path, fmt).kernel_count
        except collectors.NotBatchable:
            kernels, reader = len(collectors.collect(path, fmt).kernels), "records"
    elif reader == "records":
        kernels = len(collectors.collect(path, fmt).kernels)
    elif fmt == "gbench-json":
        with open(path, encoding="utf-8") as handle:
            kernels = len(json.load(handle)["benchmarks"])
    else:
        kernels = len(pd.read_csv(path, skiprows=[0, 2]))
    seconds, cpu = time.perf_counter() - start, _cpu() - cpu_start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    result = {"seconds": seconds, "cpu": cpu, "peak": peak, "added": peak - before}
    print(json.dumps({**result, "kernels": kernels, "path": reader}))


def _cpu() -> float:
    """CPU seconds of this process: what a busy, shared machine does not inflate."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(fmt: str, reader: str, path: Path) -> dict[str, float]:
    """One read in a fresh process."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", fmt, reader, str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,100000,1000000")
    parser.add_argument("--formats", default="gbench-json,ncu-csv-raw")
    parser.add_argument("--readers", default="columns,records,reference")
    parser.add_argument("--gaps", type=int, default=0, help="ncu launches with n/a cells")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _read_one(*args.child)
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    readers = args.readers.split(",")
    print(f"load average before: {os.getloadavg()}", flush=True)
    print(f"{'format':12}{'kernels':>10}{'MB':>6}{'reader':>17}{'wall s':>8}{'CPU s':>8}", end="")
    print(f"{'CPU µs/kernel':>15}{'peak MB':>9}{'added KB/kernel':>17}", flush=True)
    for fmt in args.formats.split(","):
        for size in sizes:
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / f"run{'.json' if fmt.endswith('json') else '.csv'}"
                if fmt == "ncu-csv-raw":
                    write_ncu(path, size, gaps=args.gaps)
                else:
                    WRITERS[fmt](path, size)
                mb = path.stat().st_size / 1e6
                got = {reader: measure(fmt, reader, path) for reader in readers}
            for reader, result in got.items():
                assert result["kernels"] == size, (reader, result)
                label = REFERENCE[fmt] if reader == "reference" else result["path"]
                per = result["cpu"] / size * 1e6
                line = f"{fmt:12}{size:>10,}{mb:>6.0f}{label:>17}{result['seconds']:>8.2f}"
                line += f"{result['cpu']:>8.2f}{per:>15.1f}{result['peak'] / 1e6:>9.0f}"
                print(f"{line}{result['added'] / size / 1e3:>17.2f}", flush=True)
            if "reference" in got:
                for reader in (r for r in got if r != "reference"):
                    ratio = got[reader]["cpu"] / got["reference"]["cpu"]
                    print(f"{'':35}{reader} / reference CPU time: {ratio:.1f}x", flush=True)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
