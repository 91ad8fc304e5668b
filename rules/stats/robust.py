"""Robust building blocks: medians, scaled MADs and trimmed levels (never means and SDs).

GPU runner noise is 1-10% with heavy outliers (clock changes, noisy neighbours), so every test
in ``rules.stats`` is built on these order statistics.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import numpy.typing as npt

from rules.stats.constants import MAD_SCALE, MEDIAN_SE, TRIMMING, UPPER_QUARTILE

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int_]
Direction = Literal["up", "down"]


def fast_median(arr: FloatArray) -> float:
    """The median of a non-empty NaN-free array.

    np.median's generality costs ~50 µs a call; a check makes thousands of small ones.
    """
    ordered = np.sort(arr)
    n = ordered.size
    # Halves first: two stored outliers near a float's limit must not sum to infinity.
    return float(ordered[(n - 1) // 2] / 2 + ordered[n // 2] / 2)


def row_medians(ordered: FloatArray) -> FloatArray:
    """The median of each sorted row of ``ordered``, as ``fast_median`` computes each."""
    n = ordered.shape[1]
    return np.asarray(ordered[:, (n - 1) // 2] / 2 + ordered[:, n // 2] / 2, dtype=float)


def robust_center_spread(values: npt.ArrayLike) -> tuple[float, float]:
    """Median and scaled MAD of ``values`` (NaNs ignored; NaN, NaN when empty).

    An infinite value (a stored figure past a float's range, percent of roof over a zero
    time) is ignored like a NaN: it is an outlier, and the median never needed it.
    """
    arr = np.asarray(values, dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return math.nan, math.nan
    center = fast_median(arr)
    return center, MAD_SCALE * fast_median(np.abs(arr - center))


def t_robust_spread(df: float) -> float:
    """The robust spread (scaled MAD) of a unit Student t with ``df`` degrees of freedom.

    Dividing a t quantile by it turns the quantile into a robust z, the unit every threshold of
    the gate is in (the noise of a value is a robust spread, not a standard deviation).
    """
    from scipy.special import stdtrit  # the t quantile; scipy.stats would cost seconds to import

    return MAD_SCALE * float(stdtrit(df, UPPER_QUARTILE))


def _location(points: FloatArray) -> tuple[float, float]:
    """Robust level of a segment and its standard error factor (see TRIMMING)."""
    ordered = np.sort(points)
    for start, fraction, factor in TRIMMING:
        if ordered.size >= start:
            cut = int(ordered.size * fraction)
            return float(ordered[cut : ordered.size - cut].mean()), factor
    return fast_median(ordered), MEDIAN_SE
