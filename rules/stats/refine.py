"""From window candidates to change points: placement, drift check, whole-segment confirmation.

Local maxima of the window statistic are the candidates; each is placed at the best two-level
split of its neighbourhood, and dropped when a straight line (a slow drift) fits that
neighbourhood as well as a step does. Last, each change is re-tested over the whole segments
between its neighbours, with the noise re-estimated around the segments' levels (weakest
first, as e-divisive's significance step). These loops run over the (few) candidates only.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import numpy.typing as npt

from rules.stats.constants import MAD_SCALE, OUTLIER_Z
from rules.stats.options import ChangePointOptions
from rules.stats.robust import FloatArray, _location, fast_median
from rules.stats.windows import ChangePointScan


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
    new_level = fast_median(segment[split:])
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


def _segment_z(row: FloatArray, bounds: list[int], floor: float) -> list[float]:
    """Robust z of each inner boundary, comparing the whole segments on either side."""
    parts = [row[a:b][~np.isnan(row[a:b])] for a, b in itertools.pairwise(bounds)]
    if any(p.size == 0 for p in parts):
        return [math.inf] * (len(parts) - 1)  # cannot happen for refined changes; keep them
    # Residuals around each segment's median: unlike first differences, every point counts
    # once, so the noise estimate is tighter (and a step does not inflate it).
    resid = np.concatenate([p - fast_median(p) for p in parts if p.size])
    spread = MAD_SCALE * fast_median(np.abs(resid))
    noise = max(spread, floor * abs(fast_median(np.concatenate(parts))))
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
