"""Detection quality: roofguard's change points against Apache Otava and a fixed-ratio threshold.

Generates labelled nightly series of percent of roof (drops and rises of 2-40%, noise
0.5-8%, clock-dip outliers, slow drift, no-change series), tunes every method on a training
seed and reports on a different test seed: precision, recall, F1, false alarms per 100
stable points and detection delay (nights after the change until the method flags it, when
re-run on the series as it grew).

* roofguard: ``rules.stats.change_points_many`` with ONE setting for every noise level
  (tuned on the training seed by mean F1; it adapts to noise by itself through the MAD).
* Otava: ``otava.analysis.compute_change_points`` (Hunter's e-divisive split/merge),
  ``max_pvalue`` and ``min_magnitude`` tuned PER NOISE LEVEL (generous to the peer).
* fixed ratio: alert when the value moves by more than a ratio versus the previous result,
  as github-action-benchmark does (``alert-threshold``), also tuned PER NOISE LEVEL.

Run: ``python tests/bench/bench_detection.py [--series 150] [--markdown detection.md]``.
Not a test (benchmarks do not run in the normal test run).
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tables import publish

from rules.stats import ChangePointOptions, CompareOptions, change_points_many, compare_to_baseline

LENGTH = 60
NOISES = (0.005, 0.01, 0.02, 0.04, 0.08)
MAGNITUDES = (0.02, 0.05, 0.10, 0.20, 0.40)
EARLY, LATE = 1, 3  # a detection within [c - EARLY, c + LATE] finds the change at c
MAX_DELAY = 8
Detector = Callable[[np.ndarray], list[int]]
BatchDetector = Callable[[Sequence[np.ndarray]], list[list[int]]]


@dataclass(frozen=True)
class Series:
    """One labelled series: ``change`` is the first index of the new level (None: no change)."""

    values: np.ndarray
    change: int | None
    magnitude: float
    kind: str
    dips: tuple[int, ...] = ()  # one-night clock dips (5-30% slower), labelled


def _outliers(rng: np.random.Generator, n: int, rate: float) -> np.ndarray:
    factor = np.ones(n)
    hit = rng.random(n) < rate
    dips = rng.random(n) < 0.75  # clock dips and neighbours mostly slow a run down
    factor[hit & dips] = 1 - rng.uniform(0.05, 0.30, n)[hit & dips]
    factor[hit & ~dips] = 1 + rng.uniform(0.05, 0.15, n)[hit & ~dips]
    return factor


def make_series(rng: np.random.Generator, noise: float) -> Series:
    """One series of percent of roof with Gaussian noise, outliers and maybe drift or a step."""
    kind = str(rng.choice(["stable", "drift", "outliers", "change", "change"]))
    level = rng.uniform(40, 90)
    values = level * (1 + noise * rng.standard_normal(LENGTH))
    change, magnitude = None, 0.0
    if kind == "drift":
        values *= 1 + np.linspace(0, rng.uniform(-0.06, 0.06), LENGTH)
    if kind == "change":
        change = int(rng.integers(10, LENGTH - 3))
        magnitude = float(rng.choice(MAGNITUDES)) * (-1 if rng.random() < 0.7 else 1)
        values[change:] *= 1 + magnitude
    factor = _outliers(rng, LENGTH, 0.08 if kind == "outliers" else 0.02)
    values *= factor
    dips = tuple(int(i) for i in np.flatnonzero(factor < 1))
    return Series(values, change, magnitude, kind, dips)


def make_dataset(seed: int, noise: float, count: int) -> list[Series]:
    """``count`` series at one noise level, reproducible from ``seed``."""
    rng = np.random.default_rng([seed, int(noise * 1e4)])
    return [make_series(rng, noise) for _ in range(count)]


# --- detectors ---------------------------------------------------------------------------


def roofguard_many(
    options: ChangePointOptions,
) -> Callable[[Sequence[np.ndarray]], list[list[int]]]:
    """roofguard on a batch of equal-length (NaN-padded) series."""

    def detect(batch: Sequence[np.ndarray]) -> list[list[int]]:
        scan = change_points_many(np.vstack(batch), options=options)
        return [list(np.flatnonzero(row)) for row in scan.is_change]

    return detect


def otava(max_pvalue: float, min_magnitude: float) -> Detector:
    """Otava's e-divisive (Hunter split + merge)."""
    from otava.analysis import compute_change_points

    def detect(values: np.ndarray) -> list[int]:
        points, _ = compute_change_points(
            [float(v) for v in values],
            window_len=50,
            max_pvalue=max_pvalue,
            min_magnitude=min_magnitude,
        )
        return [int(p.index) for p in points]

    return detect


def fixed_ratio(ratio: float) -> Detector:
    """Alert when a result differs from the previous one by more than ``ratio`` (either way)."""

    def detect(values: np.ndarray) -> list[int]:
        moved = values[1:] / values[:-1]
        return [int(i) + 1 for i in np.flatnonzero((moved > ratio) | (moved < 1 / ratio))]

    return detect


def pr_check(options: CompareOptions, window: int = 14) -> Detector:
    """roofguard's PR check run every night: each value against the previous ``window``.

    A run of consecutive alerts is one event (the regression stays visible until the baseline
    has absorbed it); the event is reported at its first alert.
    """

    def detect(values: np.ndarray) -> list[int]:
        alerts = []
        for t in range(options.min_runs, values.size):
            cmp = compare_to_baseline(values[max(0, t - window) : t], values[t], options=options)
            alerts.append(cmp.regressed or cmp.improved)
        flags = np.array([False] * options.min_runs + alerts)
        return [int(i) for i in np.flatnonzero(flags & ~np.roll(flags, 1))]

    return detect


def batch_of(single: Detector) -> Callable[[Sequence[np.ndarray]], list[list[int]]]:
    """Run a one-series detector over a batch (NaN padding stripped)."""
    return lambda batch: [single(v[~np.isnan(v)]) for v in batch]


# --- scoring -----------------------------------------------------------------------------


@dataclass
class Score:
    """Counts of one method at one noise level."""

    tp: int = 0
    fp: int = 0
    changes: int = 0
    stable_points: int = 0
    delays: tuple[int, ...] = ()

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / self.changes if self.changes else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def false_alarms_per_100(self) -> float:
        return 100.0 * self.fp / self.stable_points if self.stable_points else 0.0

    @property
    def delay(self) -> float:
        return float(np.median(self.delays)) if self.delays else math.nan


def _hit(found: list[int], change: int | None) -> int | None:
    if change is None:
        return None
    near = [d for d in found if change - EARLY <= d <= change + LATE]
    return min(near, key=lambda d: abs(d - change)) if near else None


def score(dataset: list[Series], detections: list[list[int]]) -> Score:
    """Match detections to the labelled changes."""
    result = Score()
    for series, found in zip(dataset, detections, strict=True):
        hit = _hit(found, series.change)
        result.changes += series.change is not None
        result.tp += hit is not None
        result.fp += len(found) - (hit is not None)
        window = 0 if series.change is None else EARLY + LATE + 1
        result.stable_points += LENGTH - window
    return result


def delays(
    dataset: list[Series], detections: list[list[int]], detect: BatchDetector
) -> tuple[int, ...]:
    """Nights after each found change until the method flags it on the series so far."""
    found_at: list[int] = []
    for series, found in zip(dataset, detections, strict=True):
        if _hit(found, series.change) is None or series.change is None:
            continue
        c = series.change
        ks = range(1, min(MAX_DELAY, LENGTH - c) + 1)
        prefixes = [
            np.concatenate([series.values[: c + k], np.full(LENGTH - c - k, np.nan)]) for k in ks
        ]
        hits = [_hit(p, c) is not None for p in detect(prefixes)]
        found_at.append(next((k for k, h in zip(ks, hits, strict=True) if h), LENGTH - c))
    return tuple(found_at)


# --- tuning and the report ---------------------------------------------------------------

ROOFGUARD_GRID = [
    ChangePointOptions(windows=w, z_threshold=z, min_effect=e, confirm_z=c)
    for w, z, e, c in itertools.product(
        ((4, 8, 16), (4, 8, 16, 32), (4, 8, 16, 32, 64), (8, 16, 32, 64)),
        (4.0, 4.5, 5.0, 5.5),
        (0.01, 0.02, 0.03),
        (None, 3.5, 4.0, 4.5),
    )
]
OTAVA_GRID = list(itertools.product((1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 5e-2), (0.0, 0.02, 0.05)))
RATIO_GRID = (1.02, 1.05, 1.10, 1.20, 1.50, 2.00)


def f1_of(
    dataset: list[Series], detect: Callable[[Sequence[np.ndarray]], list[list[int]]]
) -> float:
    return score(dataset, detect([s.values for s in dataset])).f1


def tune_roofguard(train: dict[float, list[Series]]) -> ChangePointOptions:
    """The one setting with the best mean F1 over every noise level."""

    def mean_f1(opts: ChangePointOptions) -> float:
        return float(np.mean([f1_of(d, roofguard_many(opts)) for d in train.values()]))

    return max(ROOFGUARD_GRID, key=mean_f1)


def tune_per_noise(
    train: list[Series], grid: Sequence[object], make: Callable[..., Detector]
) -> object:
    """The grid point with the best F1 on ``train`` (one noise level)."""

    def f1(params: object) -> float:
        args = params if isinstance(params, tuple) else (params,)
        return f1_of(train, batch_of(make(*args)))

    return max(grid, key=f1)


def evaluate_method(test: list[Series], detect: BatchDetector) -> Score:
    detections = detect([s.values for s in test])
    result = score(test, detections)
    result.delays = delays(test, detections, detect)
    return result


def _row(noise: float, method: str, s: Score, params: str) -> str:
    return (
        f"| {noise * 100:g}% | {method} | {s.precision:.2f} | {s.recall:.2f} | {s.f1:.2f} | "
        f"{s.false_alarms_per_100:.2f} | {s.delay:.0f} | {params} |"
    )


HEADER = [
    "| noise | method | precision | recall | F1 | false alarms / 100 stable points "
    "| delay (nights) | parameters |",
    "|---|---|---|---|---|---|---|---|",
]


def _offline_rows(
    noise: float, train: list[Series], test: list[Series], rg: ChangePointOptions
) -> list[str]:
    pvalue, magnitude = tune_per_noise(train, OTAVA_GRID, otava)  # type: ignore[misc]
    ratio = tune_per_noise(train, RATIO_GRID, fixed_ratio)
    rg_params = (
        f"windows={','.join(map(str, rg.windows))}, z={rg.z_threshold:g}, "
        f"min_effect={rg.min_effect:g}, confirm_z={rg.confirm_z} "
        "(all levels)"
    )
    rows = (
        ("roofguard", roofguard_many(rg), rg_params),
        (
            "Apache Otava",
            batch_of(otava(pvalue, magnitude)),
            f"max_pvalue={pvalue:g}, min_magnitude={magnitude:g}",
        ),
        ("fixed ratio", batch_of(fixed_ratio(ratio)), f"alert ratio {ratio:g}"),
    )  # type: ignore[arg-type]
    return [_row(noise, m, evaluate_method(test, d), p) for m, d, p in rows]


def report(series: int, train_seed: int, test_seed: int) -> str:
    """Tune on ``train_seed``, evaluate on ``test_seed``; the markdown tables."""
    train = {n: make_dataset(train_seed, n, series) for n in NOISES}
    test = {n: make_dataset(test_seed, n, series) for n in NOISES}
    rg = tune_roofguard(train)
    lines = [
        f"Series of {LENGTH} nights, {series} per noise level (≈60% with one change of "
        f"{', '.join(f'{m:.0%}' for m in MAGNITUDES)}, 70% drops); tuned on seed {train_seed}, "
        f"reported on seed {test_seed}. Delay: median nights after the change until flagged.",
        "",
        "Change points in the nightly series (what the digest and the trend charts use):",
        "",
        *HEADER,
    ]
    for noise in NOISES:
        lines += _offline_rows(noise, train[noise], test[noise], rg)
    pr = CompareOptions()
    lines += [
        "",
        "The PR check run online, each night judged alone against the 14 before it "
        f"(shipped defaults: z={pr.z_threshold:g}, min_effect={pr.min_effect:g}):",
        "",
        *HEADER,
    ]
    for noise in NOISES:
        score_ = evaluate_method(test[noise], batch_of(pr_check(pr)))
        lines.append(_row(noise, "roofguard PR check", score_, "one run at a time"))
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=150, help="series per noise level")
    parser.add_argument("--train-seed", type=int, default=1)
    parser.add_argument("--test-seed", type=int, default=2)
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    publish(lambda: report(args.series, args.train_seed, args.test_seed), args.markdown)


if __name__ == "__main__":
    main()
