"""What the gate's false alarms on bursty stable series are (issue 28, goal 2).

Each false alarm of ``bench_kinds.py``'s bursty series (every noise level, one seed) falls in
one of three classes:

* ``late``: a labelled change the gate found 4-8 nights after it (outside the scoring window);
* ``first``: a burst whose nights agree within the gate's own bar (``bursts.agrees``) while the
  nights before it (the gate's window) hold no burst on its side (``bursts.bursts``). Tonight
  nothing tells it from a change of level: the evidence that could is in nights not yet seen;
* ``known``: a burst after earlier ones on its side, which the kernel's own bursts should hold.

Run: ``python tests/bench/burst_alarms.py [--seed 2033] [--series 20]``.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_detection import EARLY, LATE, MAX_DELAY, NOISES
from bench_kinds import labelled
from bench_online import GATE_WINDOW, START, Labelled, _events, roofguard_alerts
from noise_kinds import HELD_OUT_SEED, make_kind_dataset

from rules.stats import judge_latest_many
from rules.stats.bursts import agrees, bursts


def _scored(series: Labelled) -> np.ndarray:
    """Nights a false alarm is counted on (outside every change's window)."""
    stable = np.ones(series.values.size, dtype=bool)
    stable[:START] = False
    for c in series.changes:
        stable[max(0, c - EARLY) : c + LATE + 1] = False
    return stable


def kind_of(series: Labelled, night: int) -> str:
    """The class of a false alarm on ``night`` of ``series`` (the module's docstring)."""
    if any(c + LATE < night <= c + MAX_DELAY for c in series.changes):
        return "late"
    first = max(0, night + 1 - GATE_WINDOW)
    judged = judge_latest_many([series.values[first : night + 1]])[0]
    run = series.values[night + 1 - judged.run : night + 1]
    before = series.values[first : night + 1 - judged.run]
    if bursts(before, 1 if judged.improved else -1).nights:
        return "known"
    return "first" if agrees(run, judged.noise, judged.level) else "other"


def classify(seed: int, count: int) -> tuple[Counter[str], int]:
    """The false alarms of every bursty series of ``seed`` by class, and the stable nights."""
    counts: Counter[str] = Counter()
    stable = 0
    for noise in NOISES:
        series = labelled(make_kind_dataset(seed, noise, "bursts", count))
        for s, flags in zip(series, roofguard_alerts([s.values for s in series]), strict=True):
            scored = _scored(s)
            stable += int(scored.sum())
            counts.update(kind_of(s, t) for t in _events(flags) if scored[t])
    return counts, stable


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=HELD_OUT_SEED)
    parser.add_argument("--series", type=int, default=20, help="series per noise level")
    args = parser.parse_args()
    counts, stable = classify(args.seed, args.series)
    print(f"bursty series, seed {args.seed}: {sum(counts.values())} false alarms, {stable} nights")
    for name in ("first", "known", "late", "other"):
        print(f"  {name:6s} {counts[name]:3d}  {100 * counts[name] / stable:.2f} per 100 nights")


if __name__ == "__main__":
    main()
