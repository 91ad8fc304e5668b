"""Report files of many distinct kernels, for the column path's tests (``collectors.batch``).

Google Benchmark JSON with the shapes the column reader must keep apart (FLOP and byte
counters or none, a rate counter, text and numeric arguments, a negative counter), and ncu
raw pages with clocks and profile figures: every kernel's record and row must come out the
same by records and by columns.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path
from typing import Any


def gbench_entry(index: int, rng: random.Random) -> dict[str, Any]:
    """One benchmark run once; its counters vary with ``index`` (so shapes change)."""
    name = f"BM_gemm/{index}/{index % 7}/manual_time"
    if index % 11 == 3:
        name = f"BM_copy/size:{index}/kind:fast/real_time"  # named and text arguments
    entry: dict[str, Any] = {
        "name": name,
        "run_name": name,
        "run_type": "iteration",
        "repetitions": 1,
        "repetition_index": 0,
        "iterations": 100,
        "real_time": round(rng.uniform(5, 500), 3),
        "cpu_time": round(rng.uniform(5, 500), 3),
        "time_unit": ("us", "ns", "ms")[index % 3],
    }
    if index % 5 != 4:
        entry["flops_fp32"] = float(2 * index * 1024 + 1)
        entry["bytes_dram"] = float(64 * index) if index % 13 else 0.0
    if index % 6 == 1:
        entry["bytes_per_second"] = rng.uniform(1e9, 1e12)  # SetBytesProcessed
        entry["items_per_second"] = 1.5e6
    if index % 17 == 2:
        entry["clock_skew"] = -1.0  # a negative counter that is no work figure is kept
    if index % 19 == 5:
        entry["label"] = "a label"
        entry["note_text"] = "text counters are left out"
    return entry


def write_gbench(
    path: Path, kernels: int, *, seed: int = 1, entries: list[Any] | None = None
) -> Path:
    """A Google Benchmark JSON file of ``kernels`` benchmarks (or of ``entries`` as given)."""
    rng = random.Random(seed)
    context = {"date": "2026-11-30T01:00:00+00:00", "host_name": "ci", "executable": "./bench"}
    context["gpu_name"] = "NVIDIA H100 80GB HBM3"
    rows = entries if entries is not None else [gbench_entry(i, rng) for i in range(kernels)]
    path.write_text(json.dumps({"context": context, "benchmarks": rows}, indent=1))
    return path


NCU_FIXED = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream"]
NCU_FIXED += ["Block Size", "Grid Size", "Device", "CC"]
NCU_METRICS = [
    ("gpu__time_duration.sum", "nsecond"),
    ("dram__bytes_read.sum", "byte"),
    ("dram__bytes_write.sum", "byte"),
    ("lts__t_bytes.sum", "byte"),
    ("smsp__cycles_elapsed.avg.per_second", "hz"),
    ("dram__cycles_elapsed.avg.per_second", "hz"),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "%"),
    ("launch__registers_per_thread", "register/thread"),
    ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst"),
    ("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "inst"),
    ("smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "inst"),
]


def write_ncu(
    path: Path, kernels: int, *, seed: int = 1, names: list[str] | None = None, gap_every: int = 0
) -> Path:
    """An ncu raw page: one launch per kernel (or per name of ``names``), varied figures.

    Every ``gap_every``-th launch has ``n/a`` cells: in turn a failed replay (every cell), a
    duration, and a counter ncu did not collect.
    """
    rng = random.Random(seed)
    kernel_names = names or [
        f"void kernel_{i}<float, {i % 4}>(float *, int)" for i in range(kernels)
    ]
    with path.open("w", newline="", encoding="utf-8") as handle:
        handle.write("==PROF== Connected to process 4242 (/usr/bin/app)\n")
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(NCU_FIXED + [name for name, _ in NCU_METRICS])
        writer.writerow([""] * len(NCU_FIXED) + [unit for _, unit in NCU_METRICS])
        for launch, name in enumerate(kernel_names):
            fixed = [str(launch), "4242", "app", "127.0.0.1", name, "1", "7"]
            fixed += [f"({32 * (1 + launch % 8)}, 1, 1)", f"({launch % 300 + 1}, 1, 1)", "0", "9.0"]
            values = [rng.randint(1_000, 10_000_000) for _ in range(4)]
            values += [rng.uniform(1.2e9, 1.9e9), rng.uniform(2e9, 2.6e9), rng.uniform(5, 95)]
            values += [rng.choice([32, 64, 128])]
            values += [rng.randint(0, 10_000_000) for _ in range(3)]
            cells = [str(v) for v in values]
            if gap_every and launch % gap_every == gap_every - 1:
                _gap(cells, launch // gap_every)
            writer.writerow(fixed + cells)
    return path


def _gap(cells: list[str], turn: int) -> None:
    """``n/a`` where a real report has it: a failed replay, no duration, a counter missing."""
    if turn % 3 == 0:
        cells[:] = ["n/a"] * len(cells)
    else:
        cells[0 if turn % 3 == 1 else -1] = "n/a"
