"""Where each window candidate's change lands: the best two-level split of its neighbourhood.

Every candidate of ``rules.stats.windows`` is placed at the least-absolute-deviation split of
the points around it (its own window on each side), dropped when a robust straight line (a
slow drift) fits those points as well as a step does, and moved past bad nights at the start
of the new level. All candidates are placed at once: they are grouped by how many points
their neighbourhood holds, and each group is one numpy array (candidates x splits x points),
so the arithmetic of every candidate is the same as on its own, with no Python loop per
candidate or per split.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rules.stats.constants import OUTLIER_Z, PLACED_PER_ARRAY
from rules.stats.robust import FloatArray

IntArray = npt.NDArray[np.int_]


@dataclass(frozen=True)
class Neighbourhoods:
    """The points around each candidate, NaN-free and left-aligned (rows = candidates).

    Attributes:
        points: Values, NaN after the ``size`` points a row holds.
        columns: The column of the series each point came from.
        size: Points each neighbourhood holds.
    """

    points: FloatArray
    columns: IntArray
    size: IntArray


def neighbourhoods(
    values: FloatArray, rows: IntArray, cols: IntArray, scales: IntArray
) -> Neighbourhoods:
    """Each candidate's own window on each side, missing nights left out."""
    n = values.shape[1]
    lo, hi = np.maximum(0, cols - scales), np.minimum(n, cols + scales)
    offsets = np.arange(int((hi - lo).max()))
    columns = lo[:, None] + offsets[None, :]
    raw = np.where(columns < hi[:, None], values[rows[:, None], np.minimum(columns, n - 1)], np.nan)
    present = ~np.isnan(raw)
    order = np.argsort(~present, axis=1, kind="stable")  # present points first, in order
    return Neighbourhoods(
        np.take_along_axis(raw, order, axis=1),
        np.take_along_axis(columns, order, axis=1),
        present.sum(axis=1),
    )


def _medians(matrix: FloatArray) -> FloatArray:
    """Median along the last axis, NaN = absent (sort once, pick the middle)."""
    ordered = np.sort(matrix, axis=-1)
    count = np.sum(~np.isnan(matrix), axis=-1)
    lo = np.take_along_axis(ordered, np.clip((count - 1) // 2, 0, None)[..., None], axis=-1)
    hi = np.take_along_axis(ordered, np.clip(count // 2, 0, None)[..., None], axis=-1)
    return np.asarray((lo[..., 0] + hi[..., 0]) / 2, dtype=float)


def best_splits(points: FloatArray, min_segment: int) -> tuple[IntArray, FloatArray]:
    """The split of each row into two levels with the least total absolute deviation.

    Rows hold the same number of points; each side keeps at least ``min_segment``.
    """
    size = points.shape[1]
    splits = np.arange(min_segment, size - min_segment + 1)
    on_left = np.arange(size)[None, :] < splits[:, None]  # splits x points
    left = np.where(on_left, points[:, None, :], np.nan)
    right = np.where(on_left, np.nan, points[:, None, :])
    cost = np.nansum(np.abs(left - _medians(left)[..., None]), axis=-1) + np.nansum(
        np.abs(right - _medians(right)[..., None]), axis=-1
    )
    best = np.argmin(cost, axis=1)
    return splits[best], cost[np.arange(points.shape[0]), best]


def line_costs(points: FloatArray) -> FloatArray:
    """Total absolute deviation of each row from its robust (Theil-Sen) line."""
    x = np.arange(points.shape[1], dtype=float)
    i, j = np.triu_indices(points.shape[1], k=1)
    slope = np.median((points[:, j] - points[:, i]) / (x[j] - x[i]), axis=1)
    intercept = np.median(points - slope[:, None] * x, axis=1)
    line = intercept[:, None] + slope[:, None] * x
    return np.asarray(np.sum(np.abs(points - line), axis=1), dtype=float)


def first_of_new_level(
    points: FloatArray, split: IntArray, tolerance: npt.NDArray[np.floating], min_segment: int
) -> IntArray:
    """Skip bad nights at the start of each new level (more than ``tolerance`` off it).

    A clock dip just before a drop lies nearer the new level than the old one, so the best
    split can start the new level at the dip, a night or two early; the new level starts at
    its first point that belongs to it (while the new level still holds ``min_segment``).
    """
    size = points.shape[1]
    index = np.arange(size)[None, :]
    ordered = np.sort(np.where(index >= split[:, None], points, np.nan), axis=1)
    count = size - split
    rows = np.arange(points.shape[0])
    # The median halves first, as robust.fast_median: two outliers must not sum to infinity.
    level = ordered[rows, (count - 1) // 2] / 2 + ordered[rows, count // 2] / 2
    last = size - min_segment
    fits = ~(np.abs(points - level[:, None]) > tolerance[:, None])  # the loop's test, negated
    searched = (index >= split[:, None]) & (index < last) & fits
    first_fit = np.where(searched.any(axis=1), np.argmax(searched, axis=1), last)
    return np.where(split < last, first_fit, split)


def place(
    values: FloatArray,
    candidates: tuple[IntArray, IntArray],
    scales: IntArray,
    noise: FloatArray,
    *,
    min_segment: int,
    detrend: bool,
) -> tuple[IntArray, npt.NDArray[np.bool_]]:
    """The column each candidate (rows, cols) moves to, and whether it stands (not a drift)."""
    rows, cols = candidates
    targets, stands = cols.copy(), np.ones(rows.size, dtype=bool)
    if rows.size == 0:
        return targets, stands
    hood = neighbourhoods(values, rows, cols, scales)
    for size in np.unique(hood.size):
        if size < 2 * min_segment:
            continue  # no split leaves min_segment on each side: the candidate stays put
        members = np.flatnonzero(hood.size == size)
        for chunk in np.array_split(members, -(-members.size // PLACED_PER_ARRAY)):
            points = np.ascontiguousarray(hood.points[chunk, :size])
            split, step_cost = best_splits(points, min_segment)
            if detrend:
                stands[chunk] = line_costs(points) > step_cost
            split = first_of_new_level(points, split, OUTLIER_Z * noise[rows[chunk]], min_segment)
            targets[chunk] = hood.columns[chunk, split]
    return targets, stands
