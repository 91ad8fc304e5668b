"""Thresholds for values judged together against the same estimated level and noise.

The nightly gate confirms a change over ``confirm_runs`` nights, each judged against the same
level with the same noise estimate. Those nights are not independent tests: a kernel whose
noise came out low (30 quiet nights), or whose level came out off, passes every one of them
more easily. Multiplying per-night tail probabilities (``tail ** (1 / confirm_runs)``) ignores
that and lets exactly those kernels fail. Here the chance that all of them are beyond the
threshold is averaged over the estimate's own uncertainty:

* noise: estimated / true ~ ``NOISE_BIAS * sqrt(chi2(nu) / nu)``, ``nu = NOISE_EFFICIENCY *
  (points - 1)``;
* level: off by a normal error of ``se`` noise units, shared by the nights judged;
* each value: Student t with ``tail_df`` degrees of freedom, scaled to its robust spread.

The two constants describe the noise estimate (``levels._spread``: the larger of the
detector's MAD of differences and the segment's clipped SD) on t(4) noise, simulated once
and checked in ``tests/rules/test_stats_gate.py``: its median is 1.15 robust spreads and its
lower tail (the quantiles that make false alarms) matches a chi with half the points' degrees
of freedom (1% / 0.1% quantiles at 30 points: 0.60 / 0.51 of the median).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from rules.stats.robust import MAD_SCALE, FloatArray

#: Degrees of freedom of the noise estimate per point, for its lower tail, on t(4) noise.
NOISE_EFFICIENCY = 0.5
#: Median of the noise estimate in robust spreads of t(4) noise.
NOISE_BIAS = 1.15
#: Nodes of the integrals over the noise estimate (log scale) and over the level's error.
_SCALE_NODES = 120  # 400 moved no threshold by more than 0.03%
_LEVEL_NODES = 16
#: Beyond this many points the estimate's uncertainty no longer matters (and is cached less).
_MAX_POINTS = 400
#: Halvings of [0.1, 1000] in log z: 24 leave the threshold within 0.06% (50 cost 2x for nothing).
_BISECTIONS = 24


@lru_cache(maxsize=512)
def _scale_grid(points: int) -> tuple[FloatArray, FloatArray]:
    """Nodes and weights of estimated / true noise (one node at the bias without points)."""
    if points < 2:
        return np.array([NOISE_BIAS]), np.array([1.0])
    from scipy.special import gammaln

    nu = NOISE_EFFICIENCY * (min(points, _MAX_POINTS) - 1)
    log_s = np.linspace(-3.0, 1.5, _SCALE_NODES)
    x = nu * np.exp(2 * log_s)  # chi2(nu) at s; d x / d log s = 2 x
    log_w = (nu / 2 - 1) * np.log(x) - x / 2 - nu / 2 * math.log(2) - gammaln(nu / 2)
    weights = np.exp(log_w) * 2 * x
    return NOISE_BIAS * np.exp(log_s), weights / weights.sum()


@lru_cache(maxsize=1)
def _hermite() -> tuple[FloatArray, FloatArray]:
    """Gauss-Hermite nodes and normalised weights (computing them cost a quarter of a threshold)."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(_LEVEL_NODES)
    return np.asarray(nodes, dtype=float), np.asarray(weights / weights.sum(), dtype=float)


def _level_grid(se: float) -> tuple[FloatArray, FloatArray]:
    if se <= 0:
        return np.zeros(1), np.ones(1)
    nodes, weights = _hermite()
    return np.asarray(se * nodes, dtype=float), weights


def all_beyond(z: float, runs: int, df: float, points: int, se: float) -> float:
    """Chance that ``runs`` values of a stable series are all ``z`` robust units below it."""
    from scipy.special import stdtr, stdtrit

    scale, w_scale = _scale_grid(points)
    shift, w_shift = _level_grid(se)
    unit = MAD_SCALE * float(stdtrit(df, 0.75))  # robust units -> t units
    # Level.z divides by noise * sqrt(1 + se^2): the estimated scale of one value.
    bound = -z * scale[:, None] * math.sqrt(1 + se**2) - shift[None, :]
    tails = stdtr(df, bound * unit) ** runs
    return float(np.sum(w_scale[:, None] * w_shift[None, :] * tails))


@lru_cache(maxsize=4096)
def joint_z(tail: float, runs: int, df: float, points: int, se: float) -> float:
    """Robust-z threshold that ``runs`` stable values all exceed with chance ``tail``."""
    lo, hi = 0.1, 1000.0
    for _ in range(_BISECTIONS):  # in log z: the chance falls monotonically with z
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if all_beyond(mid, runs, df, points, se) > tail else (lo, mid)
    return hi
