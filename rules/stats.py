"""Noise-aware change detection: a run against its baseline, and change points in a series.

Both tests are robust (medians and MADs, never means and standard deviations), because GPU
runner noise is 1-10% with heavy outliers (clock changes, noisy neighbours):

* ``compare_to_baseline``: the current value (or the median of one run's samples) against the
  baseline's median, in units of the baseline's robust spread (scaled MAD, with a floor relative
  to the centre). A change must be both *significant* (``|z| >= z_threshold``) and *large enough
  to matter* (``|relative change| >= min_effect``). Outliers in the baseline do not move the
  median nor inflate the MAD, so one odd night neither hides a drop nor creates one.
* ``change_points`` / ``change_points_many``: a multi-scale two-window robust detector. For
  every index and every window size the medians of the points before and after are compared,
  in units of the series' noise (scaled MAD of first differences, which a step does not
  inflate). Windows shrink at the ends of the series, so a large change is found two nights
  after it; long windows find small changes on noisy series. With few points on a side the
  comparison is *conservative*: at least ``min_segment`` points must have moved (with two,
  both), so one bad night is never a change.
  Local maxima of the statistic above the thresholds are the candidates; each is placed at the
  best two-level split of its neighbourhood, and dropped when a straight line (a slow drift)
  fits that neighbourhood as well as a step does. Last, each change is re-tested over the
  whole segments between its neighbours, with the noise re-estimated around the segments'
  levels (``confirm_z``; weakest first, as e-divisive's significance step): a few scattered
  bad nights can make a short window look like a new level, never a whole segment. The scan
  is numpy over a 2-D array, so thousands of series are scanned at once; the checks loop
  over the (few) candidates only.

The choice and the thresholds come from ``tests/bench/bench_detection.py`` (the table is in
.github/CONTRIBUTING.md, "Detection quality"): tuned on one seed, reported on another.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

FloatArray = npt.NDArray[np.float64]
Direction = Literal["up", "down"]

#: MAD -> standard deviation for normal data.
MAD_SCALE = 1.4826
#: Standard error of a median relative to that of a mean, for normal data (sqrt(pi/2)).
MEDIAN_SE = 1.2533
#: Location estimate by window size: ``(from points, fraction trimmed each side, standard
#: error relative to a mean on normal noise)``. Below 8 points: the median (SE 1.25, 64%
#: efficient). From 8: the interquartile mean (84%), robust to a quarter of bad nights. (A
#: lighter 12.5% trim gained no recall on noisy series in the benchmark and let clusters of
#: clock dips through on quiet ones.)
#: Beyond this many noise units from a level, a point is a bad night rather than that level.
OUTLIER_Z = 3.0
TRIMMING: tuple[tuple[int, float, float], ...] = ((8, 0.25, 1.093),)


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
        windows: Window sizes tried (points on each side; fewer at the ends of the series):
            short windows find changes quickly on quiet series, long ones find small changes
            on noisy series.
        min_segment: Fewest points a new level must hold before it is a change (2: one bad
            night is not a change).
        z_threshold: Robust z of the difference of the two windows' medians.
        min_effect: Smallest relative change that counts.
        noise_floor: Smallest relative noise assumed.
        detrend: Remove a significant slow drift (robust slope) first, so that a drift is
            not reported as a step (``ChangePointScan.drift`` reports it instead).
        window: The largest window, for callers of the single-window detector: when given,
            ``windows`` becomes 4, 8, 16 ... below it, plus ``window`` itself.
        confirm_z: Final check of each change over the whole segments between its
            neighbours (noise re-estimated around the segments' levels): the weakest change
            below this robust z is dropped, repeatedly (None: no check).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    windows: tuple[int, ...] = Field(default=(8, 16, 32, 64), min_length=1)
    window: int | None = Field(default=None, ge=2)
    detrend: bool = True
    min_segment: int = Field(default=2, ge=1)
    z_threshold: float = Field(default=5.0, gt=0)
    min_effect: float = Field(default=0.01, ge=0)
    noise_floor: float = Field(default=0.002, ge=0)
    confirm_z: float | None = Field(default=3.5, gt=0)

    @model_validator(mode="after")
    def _largest_window(self) -> ChangePointOptions:
        if self.window is not None:
            scales = {w for w in (4, 8, 16, 32, 64, 128) if w < self.window} | {self.window}
            object.__setattr__(self, "windows", tuple(sorted(scales)))
        if any(w < 2 for w in self.windows):
            raise ValueError("windows: every window needs at least 2 points")
        return self


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


def _median(arr: FloatArray) -> float:
    # np.median's generality costs ~50 µs a call; a check makes thousands of small ones.
    ordered = np.sort(arr)
    n = ordered.size
    return float((ordered[(n - 1) // 2] + ordered[n // 2]) / 2)


def robust_center_spread(values: npt.ArrayLike) -> tuple[float, float]:
    """Median and scaled MAD of ``values`` (NaNs ignored; NaN, NaN when empty)."""
    arr = np.asarray(values, dtype=float)
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        return math.nan, math.nan
    center = _median(arr)
    return center, MAD_SCALE * _median(np.abs(arr - center))


def _current_value(current: float | Sequence[float] | npt.ArrayLike) -> tuple[float, int]:
    arr = np.atleast_1d(np.asarray(current, dtype=float))
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        return math.nan, 0
    # The median of one run's samples: a few slow launches (a clock dip) do not move it.
    return _median(arr), int(arr.size)


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
        return Comparison(
            False,
            False,
            rel,
            value,
            center,
            spread,
            noise,
            int(base.size),
            math.nan,
            False,
            n_samples,
        )
    rel = (value - center) / center
    scale = noise * math.sqrt(1 + math.pi / (2 * base.size))
    z = (value - center) / scale if scale > 0 else math.copysign(math.inf, value - center)
    significant = abs(z) >= opts.z_threshold and abs(rel) >= opts.min_effect
    worse = (rel < 0) if higher_is_better else (rel > 0)
    return Comparison(
        significant and worse,
        significant and not worse,
        rel,
        value,
        center,
        spread,
        noise,
        int(base.size),
        z,
        True,
        n_samples,
    )


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
        drift: Per-series slow drift removed before the scan, in value units per point
            (0 where not significant or ``detrend`` is off), shape (series,).
    """

    is_change: npt.NDArray[np.bool_]
    z: FloatArray
    relative_change: FloatArray
    noise: FloatArray
    drift: FloatArray


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
    tie_break = score - np.arange(n) * 1e-9
    padded = np.pad(tie_break, ((0, 0), (window - 1, window - 1)), constant_values=-np.inf)
    views = np.lib.stride_tricks.sliding_window_view(padded, 2 * window - 1, axis=1)
    return np.asarray((score > 0) & (tie_break >= views.max(axis=-1)), dtype=bool)


def _row_medians(matrix: FloatArray) -> FloatArray:
    """Median of each row, NaN = absent (sort once, pick the middle)."""
    ordered = np.sort(matrix, axis=1)
    count = np.sum(~np.isnan(matrix), axis=1)
    lo = np.take_along_axis(ordered, np.clip((count - 1) // 2, 0, None)[:, None], axis=1)
    hi = np.take_along_axis(ordered, np.clip(count // 2, 0, None)[:, None], axis=1)
    return np.asarray((lo[:, 0] + hi[:, 0]) / 2, dtype=float)


def _best_split(segment: FloatArray, min_segment: int) -> tuple[int | None, float]:
    """The split of ``segment`` into two levels with the least total absolute deviation."""
    splits = np.arange(min_segment, segment.size - min_segment + 1)
    if splits.size == 0:
        return None, math.inf
    on_left = np.arange(segment.size)[None, :] < splits[:, None]
    left = np.where(on_left, segment[None, :], np.nan)
    right = np.where(on_left, np.nan, segment[None, :])
    cost = np.nansum(np.abs(left - _row_medians(left)[:, None]), axis=1) + np.nansum(
        np.abs(right - _row_medians(right)[:, None]), axis=1
    )
    best = int(np.argmin(cost))
    return int(splits[best]), float(cost[best])


def _line_cost(segment: FloatArray) -> float:
    """Total absolute deviation from a robust (Theil-Sen) line through ``segment``."""
    x = np.arange(segment.size, dtype=float)
    i, j = np.triu_indices(segment.size, k=1)
    slope = float(np.median((segment[j] - segment[i]) / (x[j] - x[i])))
    intercept = float(np.median(segment - slope * x))
    return float(np.sum(np.abs(segment - (intercept + slope * x))))


def _first_of_new_level(segment: FloatArray, split: int, tolerance: float, min_segment: int) -> int:
    """Skip bad nights at the start of the new level (more than ``tolerance`` off it).

    A clock dip just before a drop lies nearer the new level than the old one, so the best
    split can start the new level at the dip, a night or two early; the new level starts at
    its first point that belongs to it.
    """
    new_level = _median(segment[split:])
    last = segment.size - min_segment  # the new level still holds min_segment points
    while split < last and abs(segment[split] - new_level) > tolerance:
        split += 1
    return split


def _refine(
    values: FloatArray,
    scan: ChangePointScan,
    scales: npt.NDArray[np.int_],
    opts: ChangePointOptions,
) -> npt.NDArray[np.bool_]:
    """Move each candidate to the best split near it, then merge candidates that coincide.

    A window statistic peaks as soon as most of a window has moved, which can be a point or
    two early; the L1-optimal split of the neighbourhood (the candidate's own window on each
    side) places the change where the level actually moved. Candidates from several window
    sizes that land within the smallest window of each other are one change (the strongest
    is kept). Change points are few, so this loop is over candidates only.
    """
    refined = np.zeros_like(scan.is_change)
    gap = min(opts.windows)
    rows, cols = np.nonzero(scan.is_change)
    order = np.argsort(-np.abs(scan.z[rows, cols]), kind="stable")
    for row, col in zip(rows[order], cols[order], strict=True):
        w = int(scales[row, col])
        lo, hi = max(0, col - w), min(values.shape[1], col + w)
        segment = values[row, lo:hi]
        keep = ~np.isnan(segment)
        split, step_cost = _best_split(segment[keep], opts.min_segment)
        if opts.detrend and split is not None and _line_cost(segment[keep]) <= step_cost:
            continue  # a slow drift fits the neighbourhood at least as well as a step
        if split is not None:
            split = _first_of_new_level(
                segment[keep], split, OUTLIER_Z * scan.noise[row], opts.min_segment
            )
        target = col if split is None else lo + int(np.flatnonzero(keep)[split])
        near = refined[row, max(0, target - gap + 1) : target + gap]
        if not near.any():
            refined[row, target] = True
    return refined


def _location(points: FloatArray) -> tuple[float, float]:
    """Robust level of a segment and its standard error factor (see TRIMMING)."""
    ordered = np.sort(points)
    for start, fraction, factor in TRIMMING:
        if ordered.size >= start:
            cut = int(ordered.size * fraction)
            return float(ordered[cut : ordered.size - cut].mean()), factor
    return _median(ordered), MEDIAN_SE


def _segment_z(row: FloatArray, bounds: list[int], floor: float) -> list[float]:
    """Robust z of each inner boundary, comparing the whole segments on either side."""
    parts = [row[a:b][~np.isnan(row[a:b])] for a, b in itertools.pairwise(bounds)]
    if any(p.size == 0 for p in parts):
        return [math.inf] * (len(parts) - 1)  # cannot happen for refined changes; keep them
    # Residuals around each segment's median: unlike first differences, every point counts
    # once, so the noise estimate is tighter (and a step does not inflate it).
    resid = np.concatenate([p - _median(p) for p in parts if p.size])
    noise = max(MAD_SCALE * _median(np.abs(resid)), floor * abs(_median(np.concatenate(parts))))
    # Each level with its standard error in noise units: the SE factor over sqrt(points).
    located = [(_location(p), p.size) for p in parts]
    levels = [(level, factor / math.sqrt(n)) for (level, factor), n in located]
    return [
        abs(right - left) / (noise * math.hypot(left_se, right_se))
        for (left, left_se), (right, right_se) in itertools.pairwise(levels)
    ]


def _confirm(
    values: FloatArray, found: npt.NDArray[np.bool_], confirm_z: float, floor: float
) -> npt.NDArray[np.bool_]:
    """Drop, weakest first, changes whose whole segments do not differ by ``confirm_z``.

    The window scan judges each change on its own neighbourhood; this re-tests it over the
    full segments between its neighbouring changes (as e-divisive's significance step does),
    which removes changes that only a local cluster of odd nights supported.
    """
    confirmed = found.copy()
    for row in np.flatnonzero(found.any(axis=1)):
        kept = [int(i) for i in np.flatnonzero(found[row])]
        while kept:
            z = _segment_z(values[row], [0, *kept, values.shape[1]], floor)
            weakest = int(np.argmin(z))
            if z[weakest] >= confirm_z:
                break
            kept.pop(weakest)
        confirmed[row] = False
        confirmed[row, kept] = True
    return confirmed


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
    few = max(5, 2 * opts.min_segment)
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


def _drift(values: FloatArray, lag: int = 4) -> FloatArray:
    """Robust per-series slope (per point) when it is significant, else 0.

    The median of lag-``lag`` differences over ``lag``: a step touches only ``lag`` of them,
    so it barely moves the median, while a slow drift moves all of them. The slope is kept
    only beyond three standard errors, so noise is never "detrended" into a change.
    """
    diffs = values[:, lag:] - values[:, :-lag]
    with np.errstate(all="ignore"):
        count = np.sum(~np.isnan(diffs), axis=1)
        valid = count >= 8
        slope = np.zeros(values.shape[0])
        spread = np.zeros(values.shape[0])
        if valid.any():
            med = np.nanmedian(diffs[valid, :], axis=1)
            mad = np.nanmedian(np.abs(diffs[valid, :] - med[:, None]), axis=1)
            slope[valid] = med / lag
            spread[valid] = MEDIAN_SE * MAD_SCALE * mad / np.sqrt(count[valid]) / lag
    return np.where(np.abs(slope) > 3 * spread, slope, 0.0)


def _scan_block(values: FloatArray, opts: ChangePointOptions) -> ChangePointScan:
    drift = _drift(values) if opts.detrend else np.zeros(values.shape[0])
    values = np.asarray(values - drift[:, None] * np.arange(values.shape[1]), dtype=float)
    noise = _series_noise(values, opts.noise_floor)
    best_z, best_rel = np.zeros(values.shape), np.zeros(values.shape)
    scales = np.zeros(values.shape, dtype=int)
    candidates = np.zeros(values.shape, dtype=bool)
    for w in opts.windows:
        z, rel, ok = _one_scale(values, noise, w, opts)
        peaks = _local_maxima(np.where(ok, np.abs(z), 0.0), w)
        stronger = ok & (np.abs(z) > np.abs(best_z))
        best_z = np.where(stronger, z, best_z)
        best_rel = np.where(stronger, rel, best_rel)
        scales = np.where(stronger | (peaks & (scales == 0)), w, scales)
        candidates |= peaks
    scan = ChangePointScan(candidates, best_z, best_rel, noise, drift)
    found = _refine(values, scan, scales, opts)
    if opts.confirm_z is not None:
        found = _confirm(values, found, opts.confirm_z, opts.noise_floor)
    return ChangePointScan(found, best_z, best_rel, noise, drift)


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
        absent = np.full(values.shape[0], np.nan)
        return ChangePointScan(empty.astype(bool), empty, empty, absent, absent)
    blocks = [
        _scan_block(values[i : i + block_rows], opts) for i in range(0, values.shape[0], block_rows)
    ]
    return ChangePointScan(
        np.concatenate([b.is_change for b in blocks]),
        np.concatenate([b.z for b in blocks]),
        np.concatenate([b.relative_change for b in blocks]),
        np.concatenate([b.noise for b in blocks]),
        np.concatenate([b.drift for b in blocks]),
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
        found.append(
            ChangePoint(
                index,
                rel,
                "up" if after > before else "down",
                before,
                after,
                float(scan.z[0, index]),
            )
        )
    return found
