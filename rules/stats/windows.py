"""The window scan behind ``change_points``: robust two-window statistics at every scale.

For every index and every window size the levels of the points before and after are compared,
in units of the series' noise (scaled MAD of first differences, which a step does not inflate).
Windows shrink at the ends of the series. With few points on a side the comparison is
*conservative*: at least ``min_segment`` points must have moved (with two, both), so one bad
night is never a change. Everything is numpy over a 2-D array (rows = series).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np
import numpy.typing as npt

from rules.stats.constants import (
    DRIFT_LAG,
    DRIFT_MIN_DIFFS,
    DRIFT_Z,
    FEW_POINTS,
    MAD_SCALE,
    MEDIAN_SE,
    TIE_BREAK,
    TRIMMING,
)
from rules.stats.options import ChangePointOptions
from rules.stats.robust import FloatArray


@dataclass(frozen=True)
class _WindowStats:
    """Order statistics of one side's windows (arrays shaped series x points)."""

    median: FloatArray  # midpoint of the low and high medians
    center: FloatArray  # trimmed mean (see TRIMMING), else the median
    se_factor: FloatArray  # standard error of ``center`` in noise / sqrt(count) units
    low: FloatArray  # conservative interval: the level at least min_segment points hold,
    high: FloatArray  # and at least the low/high medians
    count: FloatArray

    def columns(self, start: int, stop: int) -> _WindowStats:
        """The windows ``start`` to ``stop`` (points in time)."""
        return _WindowStats(*(getattr(self, f.name)[:, start:stop] for f in fields(self)))


@dataclass(frozen=True)
class ChangePointScan:
    """Batch result of ``change_points_many`` (arrays shaped like the input).

    Attributes:
        is_change: True where a change point starts a new level.
        z: Robust z of the window-median difference at each index (0 where undefined).
        relative_change: Window-median relative change at each index.
        noise: Per-series noise (scaled MAD of first differences / sqrt 2), shape (series,).
        drift: Per-series slow drift removed before the scan, in value units per point
            (0 where not significant or ``detrend`` is off), shape (series,).
    """

    is_change: npt.NDArray[np.bool_]
    z: FloatArray
    relative_change: FloatArray
    noise: FloatArray
    drift: FloatArray


def _trimmed_mean(ordered: FloatArray, count: npt.NDArray[np.int_], fraction: float) -> FloatArray:
    """Mean of each sorted window without ``fraction`` of its points on each side."""
    width = ordered.shape[-1]
    cut = int(width * fraction)
    # Full windows (all but the series' ends) share one slice: a plain mean, no cumsum.
    result = np.asarray(ordered[..., cut : width - cut].mean(axis=-1), dtype=float)
    partial = (count < width) & (count > 0)
    if partial.any():
        rows = ordered[partial]
        sums = np.concatenate(
            [np.zeros((rows.shape[0], 1)), np.cumsum(np.nan_to_num(rows), -1)], -1
        )
        n = count[partial]
        q1 = np.floor(n * fraction).astype(int)
        q3 = n - q1
        upper = np.take_along_axis(sums, q3[:, None], axis=-1)[:, 0]
        lower = np.take_along_axis(sums, q1[:, None], axis=-1)[:, 0]
        result[partial] = (upper - lower) / (q3 - q1)
    return result


def _window_stats(windows: FloatArray, min_segment: int) -> _WindowStats:
    """Medians and the conservative interval along the last axis (NaN = absent)."""
    ordered = np.sort(windows, axis=-1)  # NaN sorts last
    count = np.sum(~np.isnan(windows), axis=-1)
    last = windows.shape[-1] - 1

    def pick(index: npt.NDArray[np.int_]) -> FloatArray:
        picked = np.take_along_axis(ordered, np.clip(index, 0, last)[..., None], axis=-1)
        return np.where(count == 0, np.nan, picked[..., 0])

    med_lo, med_hi = pick((count - 1) // 2), pick(count // 2)
    k = min(min_segment, windows.shape[-1])
    # A drop needs the k-th largest value below the old level, a rise the k-th smallest above:
    # with few points that is stricter than the median (two points must both have moved).
    kth_small, kth_large = pick(np.full_like(count, k - 1)), pick(count - k)
    median = np.asarray((med_lo + med_hi) / 2, dtype=float)
    center, se_factor = median, np.full(median.shape, MEDIAN_SE)
    for start, fraction, factor in TRIMMING:
        use = count >= start
        if windows.shape[-1] >= start and use.any():
            center = np.where(use, _trimmed_mean(ordered, count, fraction), center)
            se_factor = np.where(use, factor, se_factor)
    return _WindowStats(
        median,
        np.asarray(center, dtype=float),
        np.asarray(se_factor, dtype=float),
        np.asarray(np.fmin(med_lo, kth_large), dtype=float),
        np.asarray(np.fmax(med_hi, kth_small), dtype=float),
        count.astype(float),
    )


def _series_noise(values: FloatArray, floor: float) -> FloatArray:
    """Robust per-series noise from first differences (a few steps do not inflate it)."""
    diffs = np.abs(np.diff(values, axis=1))
    with np.errstate(all="ignore"):
        valid: npt.NDArray[np.bool_] = np.asarray(~np.isnan(diffs).all(axis=1))
        sigma = np.full(values.shape[0], np.nan)
        sigma[valid] = MAD_SCALE * np.nanmedian(diffs[valid, :], axis=1) / math.sqrt(2)
        all_absent = np.isnan(values).all(axis=1, keepdims=True)
        level = np.abs(np.nanmedian(np.where(all_absent, 0.0, values), axis=1))
    return np.asarray(np.fmax(sigma, floor * level), dtype=float)


def _interval_gap(
    l_lo: FloatArray, l_hi: FloatArray, r_lo: FloatArray, r_hi: FloatArray
) -> FloatArray:
    """Signed distance between [l_lo, l_hi] and [r_lo, r_hi] (0 when they overlap)."""
    up = np.where(r_lo > l_hi, r_lo - l_hi, 0.0)
    down = np.where(r_hi < l_lo, r_hi - l_lo, 0.0)
    return np.asarray(np.nan_to_num(up + down), dtype=float)


def _local_maxima(score: FloatArray, window: int) -> npt.NDArray[np.bool_]:
    """Where ``score`` > 0 is the largest within ``window - 1`` on each side (first on ties)."""
    n = score.shape[1]
    tie_break = score - np.arange(n) * TIE_BREAK
    padded = np.pad(tie_break, ((0, 0), (window - 1, window - 1)), constant_values=-np.inf)
    views = np.lib.stride_tricks.sliding_window_view(padded, 2 * window - 1, axis=1)
    return np.asarray((score > 0) & (tie_break >= views.max(axis=-1)), dtype=bool)


def _one_scale(
    values: FloatArray, noise: FloatArray, w: int, opts: ChangePointOptions
) -> tuple[FloatArray, FloatArray, npt.NDArray[np.bool_]]:
    """Robust z, relative change and the pass mask of the ``w``-point window test."""
    n = values.shape[1]
    padded = np.pad(values, ((0, 0), (w, w)), constant_values=np.nan)
    views = np.lib.stride_tricks.sliding_window_view(padded, w, axis=1)
    # The window after night i is the window before night i + w: summarise each window once.
    every = _window_stats(views[:, 0 : n + w], opts.min_segment)
    left, right = every.columns(0, n), every.columns(w, w + n)
    n_left, n_right = left.count, right.count
    # With few points a side, one bad night can move the median: be conservative there and use
    # the gap between the conservative intervals; with more, the median itself is robust.
    plain = np.nan_to_num(right.center - left.center)
    few = max(FEW_POINTS, 2 * opts.min_segment)
    small = (n_left < few) | (n_right < few)
    gap = np.where(small, _interval_gap(left.low, left.high, right.low, right.high), plain)
    with np.errstate(all="ignore"):
        se = noise[:, None] * np.sqrt(
            np.where(small, MEDIAN_SE**2, left.se_factor**2) / n_left
            + np.where(small, MEDIAN_SE**2, right.se_factor**2) / n_right
        )
        z = np.nan_to_num(gap / se)
        rel = np.nan_to_num(gap / np.abs(left.median))
    ok = (n_left >= opts.min_segment) & (n_right >= opts.min_segment) & ~np.isnan(values)
    ok &= (np.abs(z) >= opts.z_threshold) & (np.abs(rel) >= opts.min_effect)
    return z, rel, np.asarray(ok, dtype=bool)


def _drift(values: FloatArray, lag: int = DRIFT_LAG) -> FloatArray:
    """Robust per-series slope (per point) when it is significant, else 0.

    The median of lag-``lag`` differences over ``lag``: a step touches only ``lag`` of them,
    so it barely moves the median, while a slow drift moves all of them. The slope is kept
    only beyond ``DRIFT_Z`` standard errors, so noise is never "detrended" into a change.
    """
    diffs = values[:, lag:] - values[:, :-lag]
    with np.errstate(all="ignore"):
        count = np.sum(~np.isnan(diffs), axis=1)
        valid = count >= DRIFT_MIN_DIFFS
        slope = np.zeros(values.shape[0])
        spread = np.zeros(values.shape[0])
        if valid.any():
            med = np.nanmedian(diffs[valid, :], axis=1)
            mad = np.nanmedian(np.abs(diffs[valid, :] - med[:, None]), axis=1)
            slope[valid] = med / lag
            spread[valid] = MEDIAN_SE * MAD_SCALE * mad / np.sqrt(count[valid]) / lag
    return np.where(np.abs(slope) > DRIFT_Z * spread, slope, 0.0)
