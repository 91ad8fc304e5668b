"""Noise-aware change detection: a run against its baseline, and change points in a series.

Both tests are robust (medians and MADs, never means and standard deviations), because GPU
runner noise is 1-10% with heavy outliers (clock changes, noisy neighbours):

* ``compare_to_baseline``: the current value (or the median of one run's samples) against the
  baseline's median, in units of the baseline's robust spread (scaled MAD, with a floor relative
  to the centre). A change must be both *significant* (``|z| >= z_threshold``) and *large enough
  to matter* (``|relative change| >= min_effect``). Outliers in the baseline do not move the
  median nor inflate the MAD, so one odd night neither hides a drop nor creates one.
* ``change_points`` / ``change_points_many``: a two-window robust detector. For every index the
  medians of the ``window`` points before and after are compared, in units of the series' noise
  (scaled MAD of first differences, which a step does not inflate). The comparison is
  *conservative*: it uses the distance between the two windows' median intervals (low to high
  median), so with a two-point segment both points must have moved: one bad night is never a
  change. Local maxima of the statistic above the thresholds are the change points. Everything
  is numpy over a 2-D array, so thousands of series are scanned at once.

The choice and the thresholds come from ``tests/bench/bench_detection.py`` (docs/rules.md has
the table): tuned on one seed, reported on another.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

FloatArray = npt.NDArray[np.float64]
Direction = Literal["up", "down"]

#: MAD -> standard deviation for normal data.
MAD_SCALE = 1.4826
#: Standard error of a median relative to that of a mean, for normal data (sqrt(pi/2)).
MEDIAN_SE = 1.2533


class CompareOptions(BaseModel):
    """Thresholds of ``compare_to_baseline``.

    Attributes:
        min_runs: Fewer baseline values than this: no verdict (``enough`` is False).
        z_threshold: Robust z-score a change must reach (in baseline spreads).
        min_effect: Smallest relative change that counts, whatever the noise (practical floor).
        noise_floor: Smallest relative spread assumed, so a too-quiet baseline does not make
            every wobble significant.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    min_runs: int = Field(default=3, ge=1)
    z_threshold: float = Field(default=4.0, gt=0)
    min_effect: float = Field(default=0.03, ge=0)
    noise_floor: float = Field(default=0.005, ge=0)


class ChangePointOptions(BaseModel):
    """Thresholds of ``change_points``.

    Attributes:
        window: Points on each side compared (fewer at the ends of the series).
        min_segment: Fewest points a new level must hold before it is a change (2: one bad
            night is not a change).
        z_threshold: Robust z of the difference of the two windows' medians.
        min_effect: Smallest relative change that counts.
        noise_floor: Smallest relative noise assumed.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    window: int = Field(default=8, ge=2)
    min_segment: int = Field(default=2, ge=1)
    z_threshold: float = Field(default=5.0, gt=0)
    min_effect: float = Field(default=0.03, ge=0)
    noise_floor: float = Field(default=0.002, ge=0)


@dataclass(frozen=True)
class Comparison:
    """The result of ``compare_to_baseline``; every number needed to reproduce it.

    Attributes:
        regressed: Worse beyond noise and beyond the practical floor.
        improved: Better beyond noise and beyond the practical floor.
        relative_change: ``(current - center) / center`` (NaN without a baseline).
        current: The current value (median of the samples when samples were given).
        center: Median of the baseline.
        spread: Scaled MAD of the baseline (before the noise floor).
        noise: The spread used: ``max(spread, noise_floor * |center|)``.
        n: Number of baseline values.
        z: ``(current - center) / (noise * sqrt(1 + pi / (2 n)))``.
        enough: Whether the baseline had ``min_runs`` values.
        samples: Number of current samples (1 for a single value).
        method: Name of the test.
    """

    regressed: bool
    improved: bool
    relative_change: float
    current: float
    center: float
    spread: float
    noise: float
    n: int
    z: float
    enough: bool
    samples: int = 1
    method: str = "robust-z (median/MAD)"


def robust_center_spread(values: npt.ArrayLike) -> tuple[float, float]:
    """Median and scaled MAD of ``values`` (NaNs ignored; NaN, NaN when empty)."""
    arr = np.asarray(values, dtype=float)
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        return math.nan, math.nan
    center = float(np.median(arr))
    return center, MAD_SCALE * float(np.median(np.abs(arr - center)))


def _current_value(current: float | Sequence[float] | npt.ArrayLike) -> tuple[float, int]:
    arr = np.atleast_1d(np.asarray(current, dtype=float))
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        return math.nan, 0
    # The median of one run's samples: a few slow launches (a clock dip) do not move it.
    return float(np.median(arr)), int(arr.size)


def compare_to_baseline(
    baseline: npt.ArrayLike,
    current: float | Sequence[float] | npt.ArrayLike,
    *,
    higher_is_better: bool = True,
    options: CompareOptions | None = None,
) -> Comparison:
    """Whether ``current`` moved beyond the noise of ``baseline``.

    Args:
        baseline: One value per baseline run (NaNs ignored).
        current: One value, or the samples of one run (their median is used).
        higher_is_better: Percent of roof: True. Time: False.
        options: Thresholds (``CompareOptions`` defaults when None).

    Returns:
        A ``Comparison``; ``regressed`` and ``improved`` are both False when the baseline has
        fewer than ``min_runs`` values.
    """
    opts = options or CompareOptions()
    base = np.asarray(baseline, dtype=float).ravel()
    base = base[~np.isnan(base)]
    value, n_samples = _current_value(current)
    center, spread = robust_center_spread(base)
    noise = max(spread, opts.noise_floor * abs(center)) if base.size else math.nan
    enough = base.size >= opts.min_runs and not math.isnan(value) and center != 0
    if not enough:
        rel = (value - center) / center if base.size and center else math.nan
        return Comparison(False, False, rel, value, center, spread, noise, int(base.size),
                          math.nan, False, n_samples)  # fmt: skip
    rel = (value - center) / center
    scale = noise * math.sqrt(1 + math.pi / (2 * base.size))
    z = (value - center) / scale if scale > 0 else math.copysign(math.inf, value - center)
    significant = abs(z) >= opts.z_threshold and abs(rel) >= opts.min_effect
    worse = (rel < 0) if higher_is_better else (rel > 0)
    return Comparison(significant and worse, significant and not worse, rel, value, center,
                      spread, noise, int(base.size), z, True, n_samples)  # fmt: skip


@dataclass(frozen=True)
class ChangePoint:
    """A change in a series: the level moved at ``index`` (the first point of the new level).

    Attributes:
        index: Position of the first point of the new level.
        relative_change: ``(after - before) / before`` of the two segments' medians.
        direction: "up" or "down" (of the values; whether that is good depends on the metric).
        before: Median of the segment before.
        after: Median of the segment after.
        z: The detector's robust z at ``index``.
    """

    index: int
    relative_change: float
    direction: Direction
    before: float
    after: float
    z: float


@dataclass(frozen=True)
class ChangePointScan:
    """Batch result of ``change_points_many`` (arrays shaped like the input).

    Attributes:
        is_change: True where a change point starts a new level.
        z: Robust z of the window-median difference at each index (0 where undefined).
        relative_change: Window-median relative change at each index.
        noise: Per-series noise (scaled MAD of first differences / sqrt 2), shape (series,).
    """

    is_change: npt.NDArray[np.bool_]
    z: FloatArray
    relative_change: FloatArray
    noise: FloatArray


def _low_high_medians(windows: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Low and high medians and counts along the last axis (NaN = absent)."""
    ordered = np.sort(windows, axis=-1)  # NaN sorts last
    count = np.sum(~np.isnan(windows), axis=-1)
    lo_idx = np.clip((count - 1) // 2, 0, None)[..., None]
    hi_idx = np.clip(count // 2, 0, windows.shape[-1] - 1)[..., None]
    low = np.take_along_axis(ordered, lo_idx, axis=-1)[..., 0]
    high = np.take_along_axis(ordered, hi_idx, axis=-1)[..., 0]
    empty = count == 0
    low[empty] = np.nan
    high[empty] = np.nan
    return low, high, count.astype(float)


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


def _interval_gap(l_lo: FloatArray, l_hi: FloatArray, r_lo: FloatArray,
                  r_hi: FloatArray) -> FloatArray:  # fmt: skip
    """Signed distance between [l_lo, l_hi] and [r_lo, r_hi] (0 when they overlap)."""
    up = np.where(r_lo > l_hi, r_lo - l_hi, 0.0)
    down = np.where(r_hi < l_lo, r_hi - l_lo, 0.0)
    return np.asarray(np.nan_to_num(up + down), dtype=float)


def _local_maxima(score: FloatArray, window: int) -> npt.NDArray[np.bool_]:
    """Where ``score`` > 0 is the largest within ``window - 1`` on each side (first on ties)."""
    n = score.shape[1]
    tie_break = score - np.arange(n) * 1e-9
    padded = np.pad(tie_break, ((0, 0), (window - 1, window - 1)), constant_values=-np.inf)
    views = np.lib.stride_tricks.sliding_window_view(padded, 2 * window - 1, axis=1)
    return np.asarray((score > 0) & (tie_break >= views.max(axis=-1)), dtype=bool)


def _best_split(segment: FloatArray, min_segment: int) -> int | None:
    """The split of ``segment`` into two levels with the least total absolute deviation."""
    best, best_cost = None, math.inf
    for j in range(min_segment, segment.size - min_segment + 1):
        left, right = segment[:j], segment[j:]
        cost = float(
            np.sum(np.abs(left - np.median(left))) + np.sum(np.abs(right - np.median(right)))
        )
        if cost < best_cost:
            best, best_cost = j, cost
    return best


def _refine(values: FloatArray, is_change: npt.NDArray[np.bool_],
            opts: ChangePointOptions) -> npt.NDArray[np.bool_]:  # fmt: skip
    """Move each detected change to the best split near it.

    The window statistic peaks as soon as most of a window has moved, which can be a point or
    two early; the L1-optimal split of the neighbourhood places the change where the level
    actually moved. Change points are few, so this loop is over detections only.
    """
    refined = np.zeros_like(is_change)
    w = opts.window
    for row, col in zip(*np.nonzero(is_change), strict=True):
        lo, hi = max(0, col - w), min(values.shape[1], col + w)
        segment = values[row, lo:hi]
        keep = ~np.isnan(segment)
        split = _best_split(segment[keep], opts.min_segment)
        target = col if split is None else lo + int(np.flatnonzero(keep)[split])
        refined[row, target] = True
    return refined


def _scan_block(values: FloatArray, opts: ChangePointOptions) -> ChangePointScan:
    w, n = opts.window, values.shape[1]
    padded = np.pad(values, ((0, 0), (w, w)), constant_values=np.nan)
    views = np.lib.stride_tricks.sliding_window_view(padded, w, axis=1)
    l_lo, l_hi, n_left = _low_high_medians(views[:, 0:n])
    r_lo, r_hi, n_right = _low_high_medians(views[:, w : w + n])
    noise = _series_noise(values, opts.noise_floor)
    gap = _interval_gap(l_lo, l_hi, r_lo, r_hi)
    with np.errstate(all="ignore"):
        se = noise[:, None] * MEDIAN_SE * np.sqrt(1 / n_left + 1 / n_right)
        z = np.nan_to_num(gap / se)
        rel = np.nan_to_num(gap / np.abs((l_lo + l_hi) / 2))
    ok = (n_left >= opts.min_segment) & (n_right >= opts.min_segment) & ~np.isnan(values)
    ok &= (np.abs(z) >= opts.z_threshold) & (np.abs(rel) >= opts.min_effect)
    return ChangePointScan(_local_maxima(np.where(ok, np.abs(z), 0.0), w), z, rel, noise)


def change_points_many(
    series: pd.DataFrame | npt.ArrayLike,
    *,
    options: ChangePointOptions | None = None,
    block_rows: int = 512,
) -> ChangePointScan:
    """Scan many series at once: rows are series, columns are points in time (NaN = absent).

    Args:
        series: A 2-D array or a DataFrame (rows = series, e.g. kernels; columns = nights).
        options: Thresholds (``ChangePointOptions`` defaults when None).
        block_rows: Rows per block, to bound memory on very wide inputs.

    Returns:
        A ``ChangePointScan`` with arrays shaped like ``series``.
    """
    opts = options or ChangePointOptions()
    values = np.atleast_2d(np.asarray(series, dtype=float))
    if values.shape[1] == 0:
        empty = np.zeros(values.shape)
        return ChangePointScan(empty.astype(bool), empty, empty, np.full(values.shape[0], np.nan))
    blocks = [_scan_block(values[i : i + block_rows], opts)
              for i in range(0, values.shape[0], block_rows)]  # fmt: skip
    is_change = np.concatenate([b.is_change for b in blocks])
    return ChangePointScan(
        _refine(values, is_change, opts),
        np.concatenate([b.z for b in blocks]),
        np.concatenate([b.relative_change for b in blocks]),
        np.concatenate([b.noise for b in blocks]),
    )


def _segment_change(values: FloatArray, bounds: list[int], i: int) -> tuple[float, float]:
    before = values[bounds[i - 1] : bounds[i]]
    after = values[bounds[i] : bounds[i + 1]]
    return float(np.nanmedian(before)), float(np.nanmedian(after))


def change_points(
    series: npt.ArrayLike, *, options: ChangePointOptions | None = None
) -> list[ChangePoint]:
    """Change points of one series, oldest first.

    Args:
        series: Values in time order (NaN = a missing night).
        options: Thresholds (``ChangePointOptions`` defaults when None).

    Returns:
        One ``ChangePoint`` per level change; ``relative_change`` compares the medians of the
        whole segments on either side.
    """
    values = np.asarray(series, dtype=float).ravel()
    scan = change_points_many(values[None, :], options=options)
    indices = [int(i) for i in np.flatnonzero(scan.is_change[0])]
    bounds = [0, *indices, values.size]
    found: list[ChangePoint] = []
    for pos, index in enumerate(indices, start=1):
        before, after = _segment_change(values, bounds, pos)
        rel = (after - before) / before if before else math.nan
        found.append(ChangePoint(index, rel, "up" if after > before else "down", before, after,
                                 float(scan.z[0, index])))  # fmt: skip
    return found
