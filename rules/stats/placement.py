"""Where each window candidate's change lands: the best two-level split of its neighbourhood.

Every candidate of ``rules.stats.windows`` is placed at the least-absolute-deviation split of
the points around it (its own window on each side), dropped when a robust straight line (a
slow drift) fits those points as well as a step does, and moved past bad nights at the start
of the new level. All candidates are placed at once: they are grouped by how many points
their neighbourhood holds, and each group is one numpy array (candidates x splits x points),
so the arithmetic of every candidate is the same as on its own, with no Python loop per
candidate or per split. Each neighbourhood is sorted once and the two sides' medians of every
split picked by rank from running counts (not each side sorted again); the line's slope is
the median of every pair's slope, found by one partition.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from rules.stats.constants import OUTLIER_Z, PLACED_PER_ARRAY
from rules.stats.robust import BoolArray, FloatArray, IntArray


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


Counts = npt.NDArray[np.integer[Any]]


def _median_by_rank(ordered: FloatArray, counts: Counts, count: IntArray) -> FloatArray:
    """Median of the ``count`` points of one side of each split.

    ``counts[row, split, v]``: how many of them rank v or lower among the row's sorted points
    (``ordered``); the k-th smallest is at the first rank where that count passes k.
    """

    def kth(k: IntArray) -> FloatArray:  # the k-th smallest (0-based): its rank, then its value
        rank = np.argmax(counts > k[:, None].astype(counts.dtype), axis=2)
        return np.asarray(np.take_along_axis(ordered, rank, axis=1), dtype=float)

    return np.asarray((kth((count - 1) // 2) + kth(count // 2)) / 2, dtype=float)


def _split_medians(points: FloatArray, splits: IntArray) -> tuple[FloatArray, FloatArray]:
    """Median of the points left of each split and of those right of it (rows x splits).

    Each row is sorted once; ``below[row, s, v]``, how many of the points left of split s rank
    v or lower, is a running count over the points in series order, so each side's middle
    points are picked by rank, without sorting each side again (the same order statistics,
    so the same medians, as sorting them).
    """
    size = points.shape[1]
    order = np.argsort(points, axis=1, kind="stable")
    ordered = np.take_along_axis(points, order, axis=1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(size)[None, :], axis=1)
    inside = rank[:, :, None] <= np.arange(size)  # point i ranks v or lower
    below: Counts = (
        inside.view(np.uint8) if size <= np.iinfo(np.uint8).max else inside.astype(np.int32)
    )
    np.add.accumulate(below, axis=1, out=below)  # row s - 1: the first s points
    below = below[:, splits - 1]
    above: Counts = np.subtract(np.arange(1, size + 1, dtype=below.dtype), below)
    return _median_by_rank(ordered, below, splits), _median_by_rank(ordered, above, size - splits)


def _side_cost(points: FloatArray, medians: FloatArray, outside: BoolArray) -> FloatArray:
    """Total absolute deviation of one side of each split from its median (rows x splits).

    Summed over every point of the row with the other side's set to 0, as numpy's nansum of
    the masked side did (and a NaN deviation, of infinite points): the same additions in the
    same order, so the same bits.
    """
    deviation = points[:, None, :] - medians[..., None]
    np.abs(deviation, out=deviation)
    np.copyto(deviation, 0.0, where=outside)
    if not np.isfinite(points).all():  # inf - inf is NaN, which nansum counted as 0
        np.copyto(deviation, 0.0, where=np.isnan(deviation))
    return np.asarray(np.sum(deviation, axis=-1), dtype=float)


def best_splits(points: FloatArray, min_segment: int) -> tuple[IntArray, FloatArray]:
    """The split of each row into two levels with the least total absolute deviation.

    Rows hold the same number of points; each side keeps at least ``min_segment``.
    """
    size = points.shape[1]
    splits = np.arange(min_segment, size - min_segment + 1)
    on_left = np.arange(size)[None, :] < splits[:, None]  # splits x points
    left, right = _split_medians(points, splits)
    cost = _side_cost(points, left, ~on_left) + _side_cost(points, right, on_left)
    best = np.argmin(cost, axis=1)
    return splits[best], cost[np.arange(points.shape[0]), best]


@cache
def _pairs(size: int) -> tuple[IntArray, IntArray, FloatArray]:
    """Every pair (i < j) of ``size`` points, and j - i as a float."""
    i, j = np.triu_indices(size, k=1)
    x = np.arange(size, dtype=float)
    return i, j, x[j] - x[i]


def _row_medians(matrix: FloatArray) -> FloatArray:
    """``np.median(matrix, axis=1)``, the same values; ``matrix`` is partitioned in place.

    One partition at the upper middle rank; the lower middle point is the largest below it
    (np.median partitions at both and at the last rank, to find NaN).
    """
    size = matrix.shape[1]
    half = size // 2
    matrix.partition(half, axis=1)
    middle = matrix[:, half]
    if size % 2 == 0:
        middle = (matrix[:, :half].max(axis=1) + middle) / 2
    return np.where(np.isnan(matrix[:, half:]).any(axis=1), np.nan, middle)


def line_costs(points: FloatArray) -> FloatArray:
    """Total absolute deviation of each row from its robust (Theil-Sen) line."""
    x = np.arange(points.shape[1], dtype=float)
    i, j, run = _pairs(points.shape[1])
    rise = points[:, j] - points[:, i]
    slope = _row_medians(np.divide(rise, run, out=rise))
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
    ``tolerance`` is in the old level's units: a timing's noise grows with it, so a new level
    10x the old one scatters 10x as far, and is given that much more (``_grown``).
    """
    size = points.shape[1]
    index = np.arange(size)[None, :]
    after = index >= split[:, None]
    level = _side_median(points, after, size - split)
    last = size - min_segment
    tolerance = _grown(tolerance, level, _side_median(points, ~after, split))
    fits = ~(np.abs(points - level[:, None]) > tolerance[:, None])  # the loop's test, negated
    searched = (index >= split[:, None]) & (index < last) & fits
    first_fit = np.where(searched.any(axis=1), np.argmax(searched, axis=1), last)
    return np.where(split < last, first_fit, split)


def _side_median(points: FloatArray, side: BoolArray, count: IntArray) -> FloatArray:
    """The median of each row's ``count`` points on ``side``."""
    ordered = np.sort(np.where(side, points, np.nan), axis=1)
    rows = np.arange(points.shape[0])
    # The median halves first, as robust.fast_median: two outliers must not sum to infinity.
    return np.asarray(ordered[rows, (count - 1) // 2] / 2 + ordered[rows, count // 2] / 2)


def _grown(tolerance: npt.NDArray[np.floating], new: FloatArray, old: FloatArray) -> FloatArray:
    """``tolerance`` times how many times farther from 0 the new level is (never less).

    A 15x step of a 1%-noise timing scatters its new nights by 15% of the old level; held to
    the old level's tolerance, each read as a bad night and the change was placed at the
    first night that happened to fall near the new median, four nights late.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.abs(new) / np.abs(old)
    return np.asarray(tolerance * np.where(np.isfinite(ratio), np.maximum(ratio, 1.0), 1.0))


@dataclass(frozen=True)
class Placed:
    """Where each candidate moves, and its check against a slow drift, made on demand.

    Attributes:
        targets: The column each candidate moves to.
        step_costs: The total absolute deviation of its best split.
        checked: Whether it is checked against a drift (False: it stays put, having too few
            points for a split, or ``detrend`` is off; it stands).
        hood: The points around each candidate.
    """

    targets: IntArray
    step_costs: FloatArray
    checked: BoolArray
    hood: Neighbourhoods

    def stands(self, which: IntArray) -> BoolArray:
        """Whether candidates ``which`` stand: a line fits their points worse than the step.

        The line is robust (``line_costs``), a slow drift; computed row by row, so the same
        bits whichever candidates are checked together.
        """
        stands = np.ones(which.size, dtype=bool)
        sizes = np.where(self.checked[which], self.hood.size[which], 0)
        for size in np.unique(sizes[sizes > 0]):
            members = np.flatnonzero(sizes == size)
            for chunk in np.array_split(members, -(-members.size // PLACED_PER_ARRAY)):
                picked = which[chunk]
                points = np.ascontiguousarray(self.hood.points[picked, :size])
                stands[chunk] = line_costs(points) > self.step_costs[picked]
        return stands


def place(
    values: FloatArray,
    candidates: tuple[IntArray, IntArray],
    scales: IntArray,
    noise: FloatArray,
    *,
    min_segment: int,
    detrend: bool,
) -> Placed:
    """The column each candidate (rows, cols) moves to; its drift check on demand."""
    rows, cols = candidates
    targets, costs = cols.copy(), np.zeros(rows.size)
    checked = np.zeros(rows.size, dtype=bool)
    if rows.size == 0:
        none = np.zeros((0, 0))
        return Placed(targets, costs, checked, Neighbourhoods(none, none.astype(int), cols))
    hood = neighbourhoods(values, rows, cols, scales)
    for size in np.unique(hood.size):
        if size < 2 * min_segment:
            continue  # no split leaves min_segment on each side: the candidate stays put
        members = np.flatnonzero(hood.size == size)
        for chunk in np.array_split(members, -(-members.size // PLACED_PER_ARRAY)):
            points = np.ascontiguousarray(hood.points[chunk, :size])
            split, costs[chunk] = best_splits(points, min_segment)
            checked[chunk] = detrend
            split = first_of_new_level(points, split, OUTLIER_Z * noise[rows[chunk]], min_segment)
            targets[chunk] = hood.columns[chunk, split]
    return Placed(targets, costs, checked, hood)
