"""Paired bootstrap over series: is the gate ahead of every peer, or is that the sample?

At 8% noise the gate and the best peer differ by one change found or one false alarm in
100 series, less than the sample's own spread. So beside the point figures the online
benchmark resamples the series (the same resample for every method: the comparison is
paired) and reports how often the gate stays ahead of every peer on F1, how often its false
alarms are at most every peer's, and how often both hold at once, with the interval of its
F1 margin over the best peer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from bench_detection import Score

RESAMPLES = 2000
INTERVAL = (5.0, 95.0)  # percentiles: a 90% interval
SEED = 20261201


def _scores(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """F1 and false alarms per 100 stable points of each row of summed counts.

    A row is ``bench_detection.Score``'s counts in its field order (true and false alarms,
    changes, stable points), so the figures follow the point estimates' conventions.
    """
    scores = [Score(*(int(x) for x in row)) for row in sums.reshape(-1, sums.shape[-1])]
    shape = sums.shape[:-1]
    f1 = np.array([s.f1 for s in scores]).reshape(shape)
    alarms = np.array([s.false_alarms_per_100 for s in scores]).reshape(shape)
    return f1, alarms


@dataclass(frozen=True)
class Comparison:
    """The gate against every peer over the resamples."""

    margin: float  # gate's F1 minus the best peer's, on the sample itself
    low: float
    high: float
    f1_ahead: float  # share of resamples where the gate's F1 is above every peer's
    quieter: float  # ... where its false alarms are at most every peer's
    both: float  # ... where both hold


def compare(gate: np.ndarray, peers: Sequence[np.ndarray]) -> Comparison:
    """Resample the series of ``gate`` and ``peers`` (per-series ``Score`` counts, series x 4)."""
    methods = np.stack([gate, *peers]).astype(float)  # methods x series x 4
    rng = np.random.default_rng(SEED)
    picks = rng.integers(0, gate.shape[0], size=(RESAMPLES, gate.shape[0]))
    f1, alarms = _scores(methods[:, picks].sum(axis=2))  # methods x resamples
    margins = f1[0] - f1[1:].max(axis=0)
    ahead = f1[0] > f1[1:].max(axis=0)
    quieter = alarms[0] <= alarms[1:].min(axis=0)
    point_f1, _ = _scores(methods.sum(axis=1))
    low, high = np.percentile(margins, INTERVAL)
    return Comparison(
        margin=float(point_f1[0] - point_f1[1:].max()),
        low=float(low),
        high=float(high),
        f1_ahead=float(ahead.mean()),
        quieter=float(quieter.mean()),
        both=float((ahead & quieter).mean()),
    )


HEADER = [
    "| data | gate's F1 − best peer's | 90% interval | resamples: F1 ahead of every peer | "
    "false alarms at most every peer's | both |",
    "|---|---|---|---|---|---|",
]


def row(label: str, c: Comparison) -> str:
    return (
        f"| {label} | {c.margin:+.2f} | [{c.low:+.2f}, {c.high:+.2f}] | {c.f1_ahead:.0%} | "
        f"{c.quieter:.0%} | {c.both:.0%} |"
    )
