"""Thresholds for values judged together against the same estimated level and noise.

The nightly gate confirms a change over ``confirm_runs`` nights, each judged against the same
level with the same noise estimate. Those nights are not independent tests: a kernel whose
noise came out low (30 quiet nights), or whose level came out off, passes every one of them
more easily. Multiplying per-night tail probabilities (``tail ** (1 / confirm_runs)``) ignores
that and lets exactly those kernels fail. Here the chance that all of them are beyond the
threshold is averaged over the estimate's own uncertainty:

* noise: estimated / true ~ ``NOISE_BIAS * sqrt(chi2(nu) / nu)``, ``nu =
  LOWER_TAIL_NOISE_EFFICIENCY * (points - 1)``;
* level: off by a normal error of ``se`` noise units, shared by the nights judged;
* each value: Student t with ``tail_df`` degrees of freedom, scaled to its robust spread.

The two constants (``rules.stats.constants``) describe the noise estimate
(``levels._spread``: the larger of the detector's MAD of differences and the segment's
clipped SD) on t(4) noise, simulated once and checked in ``tests/rules/test_stats_gate.py``:
its median is 1.15 robust spreads and its lower tail (the quantiles that make false alarms)
matches a chi with half the points' degrees of freedom (1% / 0.1% quantiles at 30 points:
0.60 / 0.51 of the median).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from rules.stats.constants import (
    BISECTIONS,
    LEVEL_NODES,
    LOG_SCALE_RANGE,
    LOWER_TAIL_NOISE_EFFICIENCY,
    MAX_POINTS,
    NOISE_BIAS,
    SCALE_NODES,
    Z_BRACKET,
)
from rules.stats.robust import FloatArray, t_robust_spread


@lru_cache(maxsize=512)
def _scale_grid(points: int) -> tuple[FloatArray, FloatArray]:
    """Nodes and weights of estimated / true noise (one node at the bias without points)."""
    if points < 2:
        return np.array([NOISE_BIAS]), np.array([1.0])
    from scipy.special import gammaln

    nu = LOWER_TAIL_NOISE_EFFICIENCY * (min(points, MAX_POINTS) - 1)
    log_s = np.linspace(*LOG_SCALE_RANGE, SCALE_NODES)
    x = nu * np.exp(2 * log_s)  # chi2(nu) at s; d x / d log s = 2 x
    log_w = (nu / 2 - 1) * np.log(x) - x / 2 - nu / 2 * math.log(2) - gammaln(nu / 2)
    weights = np.exp(log_w) * 2 * x
    return NOISE_BIAS * np.exp(log_s), weights / weights.sum()


@lru_cache(maxsize=1)
def _hermite() -> tuple[FloatArray, FloatArray]:
    """Gauss-Hermite nodes and normalised weights (computing them cost a quarter of a threshold)."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(LEVEL_NODES)
    return np.asarray(nodes, dtype=float), np.asarray(weights / weights.sum(), dtype=float)


def _level_grid(se: float) -> tuple[FloatArray, FloatArray]:
    if se <= 0:
        return np.zeros(1), np.ones(1)
    nodes, weights = _hermite()
    return np.asarray(se * nodes, dtype=float), weights


def all_beyond(z: float, runs: int, df: float, points: int, se: float) -> float:
    """Chance that ``runs`` values of a stable series are all ``z`` robust units below it."""
    from scipy.special import stdtr

    scale, w_scale = _scale_grid(points)
    shift, w_shift = _level_grid(se)
    unit = t_robust_spread(df)  # robust units -> t units
    # Level.z divides by noise * sqrt(1 + se^2): the estimated scale of one value.
    bound = -z * scale[:, None] * math.sqrt(1 + se**2) - shift[None, :]
    tails = stdtr(df, bound * unit) ** runs
    return float(np.sum(w_scale[:, None] * w_shift[None, :] * tails))


@lru_cache(maxsize=4096)
def joint_z(tail: float, runs: int, df: float, points: int, se: float) -> float:
    """Robust-z threshold that ``runs`` stable values all exceed with chance ``tail``."""
    lo, hi = Z_BRACKET
    for _ in range(BISECTIONS):  # in log z: the chance falls monotonically with z
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if all_beyond(mid, runs, df, points, se) > tail else (lo, mid)
    return hi
