"""The window scan behind ``change_points``: robust two-window statistics at every scale.

For every index and every window size the levels of the points before and after are compared,
in units of the series' noise (scaled MAD of first differences, which a step does not inflate).
Windows shrink at the ends of the series. With few points on a side the comparison is
*conservative*: at least ``min_segment`` points must have moved (with two, both), so one bad
night is never a change. Everything is numpy over a 2-D array (rows = series).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields

import numpy as np
import numpy.typing as npt

from rules.stats.constants import (
    BLOCK_POINTS,
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

#: One scale's window test: robust z, relative change, and where it passes.
ScaleScan = tuple[FloatArray, FloatArray, npt.NDArray[np.bool_]]

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


#: Points of sorted windows summarised while they are still in a core's cache: twice a
#: block's own points (375 KiB of float64). The full windows of a block are sorted a few
#: series at a time into one reused buffer, never written out whole (the scan of 8,000 series
#: of a year: its 64-point windows about 15% faster, ``tests/bench/bench_change_points.py``).
CACHE_POINTS = 2 * BLOCK_POINTS


def _full_window_stats(
    windows: FloatArray, full_ranks: list[int], cuts: list[int]
) -> tuple[list[FloatArray], list[FloatArray]]:
    """The values of ``full_ranks`` and the means over ranks [cut, width - cut) of each window.

    Right for the windows that hold all their points; NaN outside the middle windows (those
    hold padding: their values come from ``_partial_windows``).
    """
    rows, positions, width = windows.shape
    picked: list[FloatArray] = [np.full((rows, positions), np.nan) for _ in full_ranks]
    means: list[FloatArray] = [np.full((rows, positions), np.nan) for _ in cuts]
    # Windows width to n (of n + width) hold points of the series only, no padding.
    inner = slice(width, max(width, positions - width + 1))
    n_inner = inner.stop - inner.start
    if n_inner == 0:
        return picked, means
    step = max(1, CACHE_POINTS // (n_inner * width))
    buffer = np.empty((min(step, rows), n_inner, width))
    for first in range(0, rows, step):
        part = buffer[: min(step, rows - first)]
        part[...] = windows[first : first + step, inner]
        part.sort(axis=-1)  # NaN sorts last
        done = slice(first, first + part.shape[0])
        for out, rank in zip(picked, full_ranks, strict=True):
            out[done, inner] = part[..., rank]
        for out, cut in zip(means, cuts, strict=True):
            out[done, inner] = part[..., cut : width - cut].mean(axis=-1)
    return picked, means


def _partial_windows(
    windows: FloatArray, count: npt.NDArray[np.int_]
) -> tuple[npt.NDArray[np.int_], FloatArray]:
    """The flat positions of the windows missing points (series' ends, gaps), each sorted."""
    width = windows.shape[-1]
    where = np.flatnonzero(count < width)
    rows, columns = np.divmod(where, windows.shape[1])
    ordered = windows[rows, columns]
    ordered.sort(axis=-1)  # NaN sorts last
    return where, ordered


def _trimmed_means(
    partial: tuple[npt.NDArray[np.int_], FloatArray],
    count: npt.NDArray[np.int_],
    fraction: float,
    full: FloatArray,
) -> FloatArray:
    """Mean of each sorted window without ``fraction`` of its points on each side.

    ``full`` holds that mean over the full window's ranks, ``partial`` the windows missing
    points (``_partial_windows``): theirs is the sum of the points of ranks [q1, q3) of each
    (NaN sorts last, beyond q3), through one ``reduceat``. An empty window's pair of bounds
    is one index (``reduceat`` gives that point): its sum is dropped, which costs less than
    copying the sorted windows without it.
    """
    where, ordered = partial
    n = count.ravel()[where]
    keep = n > 0
    if not keep.any():
        return full
    width = ordered.shape[-1]
    q1 = np.floor(n * fraction).astype(int)
    q3 = n - q1
    first = np.arange(where.size) * width
    bounds = np.column_stack([first + q1, first + q3]).ravel()
    sums = np.add.reduceat(ordered.ravel(), bounds)[::2]
    full.ravel()[where[keep]] = sums[keep] / (q3 - q1)[keep]  # ``full``: this scan's own
    return full


def _window_counts(padded: FloatArray, width: int, windows: int) -> npt.NDArray[np.int_]:
    """Points present in each of the first ``windows`` windows of ``width`` (cumulative sums)."""
    present = np.cumsum(~np.isnan(padded), axis=1)
    present = np.concatenate([np.zeros((padded.shape[0], 1), dtype=present.dtype), present], 1)
    return np.asarray(present[:, width : width + windows] - present[:, :windows])


def _full_ranks(width: int, ranks: tuple[Rank, ...]) -> list[int]:
    """The ranks of a full window (all but a series' ends): one column each."""
    full = np.array([width])
    return [int(np.clip(rank_of(full)[0], 0, width - 1)) for rank_of in ranks]


def _order_statistics(
    partial: tuple[npt.NDArray[np.int_], FloatArray],
    count: npt.NDArray[np.int_],
    ranks: tuple[Rank, ...],
    picked: list[FloatArray],
) -> list[FloatArray]:
    """The values of the given ranks in each sorted window (NaN in empty windows).

    ``ranks`` are functions of ``count``; ``picked`` holds the full windows' ranks (see
    ``_full_ranks``), and the windows missing points (``_partial_windows``) are read one by one.
    """
    where, ordered = partial
    if where.size:
        n = count.ravel()[where]
        width, index = ordered.shape[-1], np.arange(where.size)
        for out, rank_of in zip(picked, ranks, strict=True):
            got = ordered[index, np.clip(rank_of(n), 0, width - 1)]
            out.ravel()[where] = np.where(n == 0, np.nan, got)
    return picked


def _window_stats(
    windows: FloatArray, min_segment: int, count: npt.NDArray[np.int_]
) -> _WindowStats:
    """Medians and the conservative interval along the last axis (NaN = absent).

    ``count`` holds the points present in each window.
    """
    width = windows.shape[-1]
    k = min(min_segment, width)
    # A drop needs the k-th largest value below the old level, a rise the k-th smallest above:
    # with few points that is stricter than the median (two points must both have moved).
    ranks: tuple[Rank, ...] = (
        lambda c: (c - 1) // 2,
        lambda c: c // 2,
        lambda c: np.zeros_like(c) + (k - 1),
        lambda c: c - k,
    )
    trimming = [(start, fraction, factor) for start, fraction, factor in TRIMMING if width >= start]
    picked, full_means = _full_window_stats(
        windows, _full_ranks(width, ranks), [int(width * fraction) for _, fraction, _ in trimming]
    )
    partial = _partial_windows(windows, count)
    med_lo, med_hi, kth_small, kth_large = _order_statistics(partial, count, ranks, picked)
    median = np.asarray((med_lo + med_hi) / 2, dtype=float)
    center, se_factor = median, np.full(median.shape, MEDIAN_SE)
    for (start, fraction, factor), full in zip(trimming, full_means, strict=True):
        use = count >= start
        if use.any():
            center = np.where(use, _trimmed_means(partial, count, fraction, full), center)
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
) -> ScaleScan:
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
    few = max(FEW_POINTS, 2 * opts.min_segment)
    small = np.nonzero((n_left < few) | (n_right < few))  # the series' ends and gaps only
    gap = np.nan_to_num(right.center - left.center, copy=False)
    gap[small] = _interval_gap(
        left.low[small], left.high[small], right.low[small], right.high[small]
    )
    left_se, right_se = left.se_factor**2, right.se_factor**2
    left_se[small], right_se[small] = MEDIAN_SE**2, MEDIAN_SE**2
    with np.errstate(all="ignore"):
        se = noise[:, None] * np.sqrt(left_se / n_left + right_se / n_right)
        z = np.nan_to_num(gap / se, copy=False)
        rel = np.nan_to_num(gap / np.abs(left.median), copy=False)
    ok = (n_left >= opts.min_segment) & (n_right >= opts.min_segment) & ~np.isnan(values)
    ok &= (np.abs(z) >= opts.z_threshold) & (np.abs(rel) >= opts.min_effect)
    return z, rel, np.asarray(ok, dtype=bool)


def scale_scans(
    values: FloatArray, noise: FloatArray, opts: ChangePointOptions
) -> Iterator[tuple[int, ScaleScan]]:
    """Each window size ``w`` of ``opts`` with its ``_one_scale`` scan; alike scans made once.

    A window wider than the series holds every point before (or after) a night, whatever its
    width: each scale past ``n`` points scans as ``n + 1`` does, whose windows all lack
    points (so each is summarised the same way, bit for bit). It is scanned once.
    """
    scans: dict[int, ScaleScan] = {}
    for w in opts.windows:
        width = min(w, values.shape[1] + 1)
        if width not in scans:
            scans[width] = _one_scale(values, noise, width, opts)
        yield w, scans[width]


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
