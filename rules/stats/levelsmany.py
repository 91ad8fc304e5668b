"""``level_of`` of many rows at once, bit for bit where numpy does the same arithmetic.

The nightly judgement computes one level per kernel (the segment before the newest night, and
the level kept for the next PR). Rows whose segments have the same length form one matrix;
each row's sort, median, trimmed mean and sum of squares are the same operations in the same
order as ``levels.level_of``'s on that row alone (numpy reduces each contiguous row with the
same pairwise summation as a 1-d array of its length), so the figures are equal, not close.
The kept residuals (within the clip) of rows that keep as many are packed into one dense
matrix, in their order, so their sums of squares are pairwise sums of the same numbers too.
Only the common case is done so: a segment long enough to be trimmed and to give a standard
deviation, every value finite and non-zero. Every other row is computed by ``level_of``
itself; ``tests/rules/test_stats_batchreplay.py`` compares the two by ``repr``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from rules.stats.constants import CLIP_Z, MAD_SCALE, MIN_SD_POINTS, TRIMMING
from rules.stats.levels import Level, level_of
from rules.stats.robust import BoolArray, FloatArray

#: The shortest segment done as a matrix: trimmed (``TRIMMING``) and with a standard deviation.
_LONG = max(MIN_SD_POINTS, TRIMMING[0][0])


def _median(ordered: FloatArray) -> FloatArray:
    """Row medians of row-sorted ``ordered``, as ``fast_median`` computes each."""
    n = ordered.shape[1]
    return np.asarray(ordered[:, (n - 1) // 2] / 2 + ordered[:, n // 2] / 2, dtype=float)


def _sd(resid: FloatArray, kept: BoolArray, base: FloatArray) -> FloatArray:
    """``levels._spread`` of each row: the larger of ``base`` and the kept residuals' sd.

    The kept residuals of rows that keep as many are one dense matrix, in their order.
    """
    count = kept.sum(axis=1)
    spread = base.copy()
    for m in np.unique(count[count >= MIN_SD_POINTS]):
        at = np.flatnonzero(count == m)
        dense = resid[at][kept[at]].reshape(at.size, int(m))
        sd = np.sqrt(np.sum(dense**2, axis=1) / (m - 1))
        spread[at] = np.maximum(base[at], sd)
    return spread


def _group(segment: FloatArray, noise: FloatArray) -> tuple[FloatArray, FloatArray, BoolArray]:
    """Location, spread (before the floor) and whether both are exact, of each row."""
    n = segment.shape[1]
    ordered = np.sort(segment, axis=1)
    cut = int(n * TRIMMING[0][1])
    location = np.asarray(np.ascontiguousarray(ordered[:, cut : n - cut]).mean(axis=1), dtype=float)
    resid = segment - location[:, None]
    absolute = np.abs(resid)
    mad = MAD_SCALE * _median(np.sort(absolute, axis=1))
    kept = np.asarray(absolute <= (CLIP_Z * mad)[:, None], dtype=bool)
    # A zero's sign may land either way in a sort (0.0 == -0.0): such rows are left to level_of.
    exact = np.asarray(np.all(np.isfinite(segment) & (segment != 0), axis=1), dtype=bool)
    base = np.asarray(np.where(np.isfinite(noise), noise, 0.0), dtype=float)
    return location, _sd(resid, kept, base), exact


def levels_many(
    rows: Sequence[FloatArray], starts: Sequence[int], noise: FloatArray, floor: float
) -> list[Level]:
    """``level_of(rows[i], starts[i], noise[i], floor)`` of each row (``repr``-equal)."""
    out: list[Level | None] = [None] * len(rows)
    lengths = np.array([r.size - s for r, s in zip(rows, starts, strict=True)], dtype=int)
    for n in np.unique(lengths[lengths >= _LONG]):
        at = np.flatnonzero(lengths == n)
        segment = np.stack([rows[i][starts[i] :] for i in at])
        noises = np.array([noise[i] for i in at], dtype=float)
        location, spread, exact = _group(segment, noises)
        se = TRIMMING[0][2] / math.sqrt(int(n))
        for j, i in enumerate(at):
            if exact[j]:
                where = float(location[j])
                used = max(float(spread[j]), floor * abs(where))
                out[i] = Level(where, used, int(n), int(starts[i]), se, int(rows[i].size))
    return [
        level_of(rows[i], starts[i], float(noise[i]), floor) if one is None else one
        for i, one in enumerate(out)
    ]


def levels_without(
    rows: Sequence[FloatArray],
    starts: Sequence[int],
    noise: FloatArray,
    floor: float,
    last: Sequence[int | None],
) -> list[Level | None]:
    """``level_of`` of each row without its ``last[i]`` nights, all at once (None: not asked)."""
    told = [(i, cut) for i, cut in enumerate(last) if cut is not None]
    at = [i for i, _ in told]
    shorter = [rows[i][: rows[i].size - cut] for i, cut in told]
    out: list[Level | None] = [None] * len(rows)
    for i, level in zip(
        at, levels_many(shorter, [starts[i] for i in at], noise[at], floor), strict=True
    ):
        out[i] = level
    return out
