"""Another card's levels from a mixed-clock history, judged per kernel (a script, not a test).

A check's cross-device baseline (``RuleContext.gate_scaling``), ``roofguard compare`` and the
digest's device changes read each kernel's level on the other card against the roof its work
was placed on there. A run of an ncu report with clocks beside clockless files placed the
clockless kernels on the datasheet roof as it is (a ``ClockedRoof``), and which of its two
roofs a level is of is read from its figures (``rules.placedroof``). Generated: ``--kernels``
H100 kernels of ``--nights`` such runs (half the kernels clockless), their levels
(``rules.device_levels``, not timed) and one time each on a B200; timed is the judgement:
each level's roof (``rules.level_roofs`` where the tree has it), ``rules.scale`` and
``rules.keeping`` of every kernel. Best CPU time of ``--repeat``, each tree in a fresh
process, alternated twice; with ``--reference-tree DIR`` (``git archive REV | tar -x -C
DIR``, repeatable) the same kernels are judged by the code in ``DIR`` and the figures compared.

Usage::

    python tests/bench/bench_mixed_clock_levels.py [--kernels 2000] [--nights 20]
        [--repeat 5] [--reference-tree DIR ...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from treerun import run_on_tree

HERE = Path(__file__).resolve()
#: The SM clock of the runs' ncu report, a share of the H100's boost clock.
SM_CLOCK = 0.803


def _roofs() -> tuple[Any, Any]:
    """The H100's ``ClockedRoof`` at ``SM_CLOCK`` (DRAM at its own), and the B200's roof."""
    from rules import ClockedRoof, builtin_catalog

    sheet = builtin_catalog().lookup("H100-SXM5").roof()
    scaled = replace(
        sheet,
        peak_flop_per_s={p: v * SM_CLOCK for p, v in sheet.peak_flop_per_s.items()},
        bandwidth_byte_per_s={
            t: v * (1.0 if t == "dram" else SM_CLOCK) for t, v in sheet.bandwidth_byte_per_s.items()
        },
    )
    return ClockedRoof(**vars(scaled), unscaled=sheet), builtin_catalog().lookup("B200").roof()


def history(kernels: int, nights: int) -> tuple[pd.DataFrame, dict[str, float]]:
    """The H100's nights (``HISTORY_COLUMNS``) and each kernel's one B200 time, by key."""
    from rules import HISTORY_COLUMNS, place

    source, target = _roofs()
    rng = np.random.default_rng(3)
    rows, times = [], {}
    for k in range(kernels):
        flops = {str(rng.choice(["tensor_bf16", "fp32"])): float(10 ** rng.uniform(8, 13))}
        nbytes = {"dram": float(10 ** rng.uniform(7, 10)), "l2": float(10 ** rng.uniform(7, 10))}
        placed = place(flops, nbytes, None, source.unscaled if k % 2 else source)
        pct = float(rng.uniform(40, 90))
        for night in range(nights):
            time_s = placed.t_roof_s / (pct / 100) * float(rng.lognormal(0.0, 0.02))
            stamp = pd.Timestamp("2026-01-01", tz="UTC") + pd.Timedelta(days=night)
            rows.append(
                (
                    night,
                    f"{night:04d}",
                    stamp,
                    "nightly",
                    f"k{k}",
                    f"k{k}",
                    source.device,
                    "datasheet",
                    100 * placed.t_roof_s / time_s,
                    None,
                    placed.binding,
                    time_s,
                    placed.total_flops,
                    placed.peak_flop_time_s,
                    nbytes["dram"],
                    nbytes["l2"],
                    np.nan,
                    None,
                    None,
                    None,
                    True,
                )
            )
        now = place(flops, nbytes, None, target).t_roof_s
        times[f"k{k}"] = now / (pct * float(rng.uniform(0.6, 1.0)) / 100)
    return pd.DataFrame(rows, columns=list(HISTORY_COLUMNS)), times


def judge(levels: dict[str, Any], times: dict[str, float]) -> list[tuple[Any, ...]]:
    """Every kernel's scaling and keeping; each level's roof chosen at once where it can be."""
    import rules

    source, target = _roofs()
    batch = getattr(rules, "level_roofs", None)
    own = batch(levels.values(), source) if batch is not None else {}
    found = []
    for key, level in levels.items():
        placed = {"placed": own[key]} if key in own else {}
        scaled = rules.scale(level, source, target, [times[key]], **placed)
        if scaled is None:
            found.append((key, None))
            continue
        kept = rules.keeping(scaled).value
        found.append((key, round(scaled.percent, 9), round(scaled.expected_time_ratio, 9), kept))
    return found


def measure(args: argparse.Namespace) -> dict[str, object]:
    """This process's tree: best CPU seconds of ``judge`` and its figures' hash."""
    from rules import device_levels

    frame, times = history(args.kernels, args.nights)
    levels = device_levels(frame)
    best, out = float("inf"), []
    for _ in range(args.repeat):
        start = time.process_time()
        out = judge(levels, times)
        best = min(best, time.process_time() - start)
    figures = hashlib.sha256(repr(out).encode()).hexdigest()[:16]
    return {"seconds": best, "figures": figures, "levels": len(levels)}


def child(tree: Path, args: argparse.Namespace) -> dict[str, object]:
    flags = ["--kernels", str(args.kernels), "--nights", str(args.nights)]
    return run_on_tree(HERE, tree, [*flags, "--repeat", str(args.repeat)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kernels", type=int, default=2000)
    parser.add_argument("--nights", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--reference-tree", type=Path, action="append", default=[])
    parser.add_argument("--code", type=Path)  # the tree measured (set for the child)
    args = parser.parse_args()
    if args.code:
        sys.path.insert(0, str(args.code))
        print(json.dumps(measure(args)))
        return
    trees = [("this tree", HERE.parents[2])]
    trees += [(str(tree), tree.resolve()) for tree in args.reference_tree]
    print(f"{args.kernels:,} kernels x {args.nights} mixed-clock nights, best of {args.repeat}")
    print("| tree | levels | CPU s | figures |\n|---|--:|--:|---|")
    for name, tree in trees * 2:  # alternated, twice
        result = child(tree, args)
        seconds, figures = result["seconds"], result["figures"]
        print(f"| {name} | {result['levels']} | {seconds:.3f} | `{figures}` |")


if __name__ == "__main__":
    main()
