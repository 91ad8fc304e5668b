"""What the gate costs on 2,000 kernels: the nightly judgement and a PR's levels.

``judge_latest_many`` (a nightly run) and ``current_levels`` (a PR's base levels) on 2,000
kernels with t(5) noise of 0.5-5%, at 30 and 180 nights, side by side in one process with the
reference setting of the replay window (``REPLAY_NIGHTS`` 16, the setting before 33db221) so
the machine's load cancels out: the two settings alternate, and each figure is the best of
``--repeat``.

Run: ``python tests/bench/bench_gate_cost.py [--kernels 2000] [--repeat 3] [--markdown FILE]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tables import publish

import rules.stats.batchreplay as batchreplay
import rules.stats.runs as runs
from rules.stats import GateOptions, current_levels, judge_latest_many
from rules.stats.robust import FloatArray

REFERENCE_REPLAY = 16
LENGTHS = (30, 180)


def histories(rng: np.random.Generator, kernels: int, nights: int) -> list[FloatArray]:
    cv = np.exp(rng.uniform(np.log(0.005), np.log(0.05), kernels))
    return [60 * (1 + c * rng.standard_t(5, nights)) for c in cv]


def seconds(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def timings(history: list[FloatArray], replay: int) -> tuple[float, float]:
    """Nightly and PR-levels times with ``replay`` nights replayed."""
    shipped, runs.REPLAY_NIGHTS = runs.REPLAY_NIGHTS, replay
    batchreplay.REPLAY_NIGHTS = replay  # the batch replay's window (the nightly gate's)
    opts = GateOptions(family_size=len(history))
    try:
        nightly = seconds(lambda: judge_latest_many(history, options=opts))
        levels = seconds(lambda: current_levels(history, options=opts))
    finally:
        runs.REPLAY_NIGHTS = batchreplay.REPLAY_NIGHTS = shipped
    return nightly, levels


def report(kernels: int, repeat: int) -> str:
    rng = np.random.default_rng(5)
    shipped = runs.REPLAY_NIGHTS
    lines = [
        f"{kernels} kernels, best of {repeat}, the two replay windows alternating.",
        "",
        f"| history | nightly, replay {REFERENCE_REPLAY} | nightly, replay {shipped} (shipped) "
        f"| PR levels, replay {REFERENCE_REPLAY} | PR levels, replay {shipped} (shipped) |",
        "|---|--:|--:|--:|--:|",
    ]
    for nights in LENGTHS:
        history = histories(rng, kernels, nights)
        warm = GateOptions(family_size=len(history))  # the thresholds both settings use
        judge_latest_many(history[:50], options=warm)
        current_levels(history[:50], options=warm)
        best = {REFERENCE_REPLAY: [np.inf, np.inf], shipped: [np.inf, np.inf]}
        for _ in range(repeat):
            for replay in (REFERENCE_REPLAY, shipped):
                figures = timings(history, replay)
                best[replay] = [min(a, b) for a, b in zip(best[replay], figures, strict=True)]
        ref, now = best[REFERENCE_REPLAY], best[shipped]
        cells = " | ".join(f"{t:.2f} s" for t in (ref[0], now[0], ref[1], now[1]))
        lines.append(f"| {nights} nights | {cells} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()
    publish(lambda: report(args.kernels, args.repeat), args.markdown)


if __name__ == "__main__":
    main()
