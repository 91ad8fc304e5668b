"""Like-for-like history of many mixed series, beside a reference tree (a script, not a test).

``rules.like_for_like_history`` reads the kernel page's chart, ``roofguard plot`` and, in the
digest, every series whose runs held more than one binding. Generated: ``--series`` H100
series of ``--nights`` runs each, a share ``--off`` of the runs bound by dram instead of the
series' usual tensor_bf16 (the same work in every run, so both trees must give the same
figures). Best wall time of ``--repeat`` calls, each tree in a fresh process; with
``--reference-tree DIR`` (e.g. ``git archive f0f3f69 | tar -x -C DIR``) the same frame is
measured on the code in ``DIR`` and the figures compared.

Usage::

    python tests/bench/bench_like_for_like.py [--series 2000] [--nights 300] [--off 0.3]
        [--repeat 3] [--reference-tree DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from treerun import run_on_tree

HERE = Path(__file__).resolve()


def history(series: int, nights: int, off: float) -> pd.DataFrame:
    """``series`` x ``nights`` history rows, a share ``off`` of them bound by dram."""
    rng = np.random.default_rng(1)
    rows = series * nights
    kernel = np.repeat(np.arange(series), nights)
    dram = rng.random(rows) < off
    return pd.DataFrame(
        {
            "run_id": np.tile(np.arange(1, nights + 1), series),
            "device": "H100-SXM5",
            "kernel_key": [f"k{k}" for k in kernel],
            "binding": np.where(dram, "dram", "tensor_bf16").astype(object),
            "percent_of_roof": 60 + rng.random(rows),
            "time_s": 1e-3 * (1 + rng.random(rows)),
            "total_flops": 1e12,
            "bytes_dram": 1e9,
        }
    )


def measure(args: argparse.Namespace) -> dict[str, object]:
    """This process's tree: best seconds of ``like_for_like_history`` and its figures' hash."""
    from rules import builtin_catalog, like_for_like_history

    frame = history(args.series, args.nights, args.off)
    roof = builtin_catalog().lookup("H100-SXM5").roof()
    roofs = dict.fromkeys(range(1, args.nights + 1), roof)
    best, out = float("inf"), frame
    for _ in range(args.repeat):
        start = time.perf_counter()
        out = like_for_like_history(frame, roofs)
        best = min(best, time.perf_counter() - start)
    figures = out["percent_of_roof"].to_numpy(dtype=float).round(9).tobytes()
    return {"seconds": best, "figures": hashlib.sha256(figures).hexdigest()[:16]}


def child(tree: Path, args: argparse.Namespace) -> dict[str, object]:
    flags = ["--series", str(args.series), "--nights", str(args.nights), "--off", str(args.off)]
    return run_on_tree(HERE, tree, [*flags, "--repeat", str(args.repeat)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--series", type=int, default=2000)
    parser.add_argument("--nights", type=int, default=300)
    parser.add_argument("--off", type=float, default=0.3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reference-tree", type=Path)
    parser.add_argument("--code", type=Path)  # the tree measured (set for the child)
    args = parser.parse_args()
    if args.code:
        sys.path.insert(0, str(args.code))
        print(json.dumps(measure(args)))
        return
    trees = [("this tree", HERE.parents[2])]
    if args.reference_tree:
        trees.append(("reference", args.reference_tree.resolve()))
    rows = args.series * args.nights
    print(f"{rows:,} rows, {args.off:.0%} off the usual binding, best of {args.repeat}")
    print("| tree | seconds | figures |\n|---|--:|---|")
    for name, tree in trees * 2:  # alternated, twice
        result = child(tree, args)
        print(f"| {name} | {result['seconds']:.3f} | `{result['figures']}` |")


if __name__ == "__main__":
    main()
