"""The window scan behind ``change_points``: robust two-window statistics at every scale.

For every index and every window size the levels of the points before and after are compared,
in units of the series' noise (scaled MAD of first differences, which a step does not inflate).
Windows shrink at the ends of the series. With few points on a side the comparison is
*conservative*: at least ``min_segment`` points must have moved (with two, both), so one bad
night is never a change. Everything is numpy over a 2-D array (rows = series).
"""

from __future__ import annotations

import math
from collections.abc import Callable
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

#: A rank within a sorted window, as a function of the points the window holds.
Rank = Callable[[npt.NDArray[np.int_]], npt.NDArray[np.int_]]


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


def _trimmed_means(ordered: FloatArray, count: npt.NDArray[np.int_], fraction: float) -> FloatArray:
    """Mean of each sorted window without ``fraction`` of its points on each side."""
    width = ordered.shape[-1]
    cut = int(width * fraction)
    # Full windows (all but the series' ends) share one slice: a plain mean.
    result = np.asarray(ordered[..., cut : width - cut].mean(axis=-1), dtype=float)
    partial = (count < width) & (count > 0)
    if partial.any():
        # The few windows at the ends of a series (or around missing nights): the sum of the
        # points of ranks [q1, q3) of each, read in place (NaN sorts last, beyond q3).
        n = count[partial]
        q1 = np.floor(n * fraction).astype(int)
        q3 = n - q1
        first = np.flatnonzero(partial) * width
        bounds = np.column_stack([first + q1, first + q3]).ravel()
        sums = np.add.reduceat(np.ascontiguousarray(ordered).ravel(), bounds)[::2]
        result[partial] = sums / (q3 - q1)
    return result


def _window_counts(padded: FloatArray, width: int, windows: int) -> npt.NDArray[np.int_]:
    """Points present in each of the first ``windows`` windows of ``width`` (cumulative sums)."""
    present = np.cumsum(~np.isnan(padded), axis=1)
    present = np.concatenate([np.zeros((padded.shape[0], 1), dtype=present.dtype), present], 1)
    return np.asarray(present[:, width : width + windows] - present[:, :windows])


def _order_statistics(
    ordered: FloatArray, count: npt.NDArray[np.int_], ranks: tuple[Rank, ...]
) -> list[FloatArray]:
    """The values of the given ranks in each sorted window (NaN in empty windows).

    ``ranks`` are functions of ``count``: full windows (all but a series' ends) all share the
    full window's ranks, a plain column each; only the partial ones are gathered one by one.
    """
    width = ordered.shape[-1]
    full = np.array([width])
    full_ranks = [int(np.clip(rank_of(full)[0], 0, width - 1)) for rank_of in ranks]
    picked = [np.array(ordered[..., r], dtype=float) for r in full_ranks]
    partial = count < width
    if partial.any():
        # One value per partial window, read in place: no copy of its points.
        flat, where, n = ordered.reshape(-1, width), np.flatnonzero(partial), count[partial]
        for out, rank_of in zip(picked, ranks, strict=True):
            got = flat[where, np.clip(rank_of(n), 0, width - 1)]
            out[partial] = np.where(n == 0, np.nan, got)
    return picked


def _window_stats(
    windows: FloatArray, min_segment: int, count: npt.NDArray[np.int_]
) -> _WindowStats:
    """Medians and the conservative interval along the last axis (NaN = absent).

    ``count`` holds the points present in each window.
    """
    ordered = np.sort(windows, axis=-1)  # NaN sorts last
    k = min(min_segment, windows.shape[-1])
    # A drop needs the k-th largest value below the old level, a rise the k-th smallest above:
    # with few points that is stricter than the median (two points must both have moved).
    med_lo, med_hi, kth_small, kth_large = _order_statistics(
        ordered,
        count,
        (
            lambda c: (c - 1) // 2,
            lambda c: c // 2,
            lambda c: np.zeros_like(c) + (k - 1),
            lambda c: c - k,
        ),
    )
    median = np.asarray((med_lo + med_hi) / 2, dtype=float)
    center, se_factor = median, np.full(median.shape, MEDIAN_SE)
    for start, fraction, factor in TRIMMING:
        use = count >= start
        if windows.shape[-1] >= start and use.any():
            center = np.where(use, _trimmed_means(ordered, count, fraction), center)
            se_factor = np.where(use, factor, se_factor)
    return _WindowStats(
        median,
        np.asarray(center, dtype=float),
        np.asarray(se_factor, dtype=float),
        np.asarray(np.fmin(med_lo, kth_large), dtype=float),
        np.asarray(np.fmax(med_hi, kth_small), dtype=float),
        count.astype(float),
    )


def _row_nanmedians(matrix: npt.NDArray[np.floating]) -> FloatArray:
    """``np.nanmedian(matrix, axis=1)``, the same values, without its masked-array path.

    (numpy takes a masked-array median for rows under 600 points: several times slower.)
    """
    ordered = np.sort(matrix, axis=1)  # NaN sorts last
    count = np.sum(~np.isnan(matrix), axis=1)
    rows, last = np.arange(matrix.shape[0]), max(matrix.shape[1] - 1, 0)
    lo = ordered[rows, np.clip((count - 1) // 2, 0, last)]
    hi = ordered[rows, np.clip(count // 2, 0, last)]
    return np.asarray(np.where(count > 0, (lo + hi) / 2, np.nan), dtype=float)


def _series_noise(values: FloatArray, floor: float) -> FloatArray:
    """Robust per-series noise from first differences (a few steps do not inflate it)."""
    diffs = np.abs(np.diff(values, axis=1))
    with np.errstate(all="ignore"):
        valid: npt.NDArray[np.bool_] = np.asarray(~np.isnan(diffs).all(axis=1))
        sigma = np.full(values.shape[0], np.nan)
        sigma[valid] = MAD_SCALE * _row_nanmedians(diffs[valid, :]) / math.sqrt(2)
        all_absent = np.isnan(values).all(axis=1, keepdims=True)
        level = np.abs(_row_nanmedians(np.where(all_absent, 0.0, values)))
    return np.asarray(np.fmax(sigma, floor * level), dtype=float)


def _interval_gap(
    l_lo: FloatArray, l_hi: FloatArray, r_lo: FloatArray, r_hi: FloatArray
) -> FloatArray:
    """Signed distance between [l_lo, l_hi] and [r_lo, r_hi] (0 when they overlap)."""
    up = np.where(r_lo > l_hi, r_lo - l_hi, 0.0)
    down = np.where(r_hi < l_lo, r_hi - l_lo, 0.0)
    return np.asarray(np.nan_to_num(up + down), dtype=float)


def _running_max(score: FloatArray, size: int) -> FloatArray:
    """Maximum over the ``size`` (odd) points centred on each point, -inf beyond the ends.

    Doubling spans (a sparse table): the maximum over ``span`` points for span 1, 2, 4 ...,
    then two overlapping spans cover the window; log2(size) passes, not ``size``.
    """
    half = size // 2
    table = np.pad(score, ((0, 0), (half, half)), constant_values=-np.inf)
    span = 1
    while span * 2 <= size:
        table = np.maximum(table[:, :-span], table[:, span:])
        span *= 2
    n = score.shape[1]
    return np.asarray(np.maximum(table[:, :n], table[:, size - span : size - span + n]))


def _local_maxima(score: FloatArray, window: int) -> npt.NDArray[np.bool_]:
    """Where ``score`` > 0 is the largest within ``window - 1`` on each side (first on ties)."""
    tie_break = score - np.arange(score.shape[1]) * TIE_BREAK
    nearby = _running_max(tie_break, 2 * window - 1)
    return np.asarray((score > 0) & (tie_break >= nearby), dtype=bool)


def _one_scale(
    values: FloatArray, noise: FloatArray, w: int, opts: ChangePointOptions
) -> tuple[FloatArray, FloatArray, npt.NDArray[np.bool_]]:
    """Robust z, relative change and the pass mask of the ``w``-point window test."""
    n = values.shape[1]
    padded = np.pad(values, ((0, 0), (w, w)), constant_values=np.nan)
    views = np.lib.stride_tricks.sliding_window_view(padded, w, axis=1)
    # The window after night i is the window before night i + w: summarise each window once.
    every = _window_stats(views[:, 0 : n + w], opts.min_segment, _window_counts(padded, w, n + w))
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
            med = _row_nanmedians(diffs[valid, :])
            mad = _row_nanmedians(np.abs(diffs[valid, :] - med[:, None]))
            slope[valid] = med / lag
            spread[valid] = MEDIAN_SE * MAD_SCALE * mad / np.sqrt(count[valid]) / lag
    return np.where(np.abs(slope) > DRIFT_Z * spread, slope, 0.0)
