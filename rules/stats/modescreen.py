"""The batch replay's screen for runs judged against a mode (``modelevel.mode_level``).

``rules.stats.batchreplay`` certifies most nights in numpy. A run past both modes of a
two-level segment is judged in the within-mode noise (``runs.step``), where it may confirm
what the segment's level says cannot. Such a run lies past the outermost of the segment's kept
nights (``modelevel.fence``), and the kept nights split into two modes well apart
(``modes.two_modes``, ``MODE_CARRY_SEPARATION``). Both are read here for many rows at once,
with the same formulas; a row where both may hold (within the rounding the two computations
can differ by, ``REPLAY_TOLERANCE``) is read one by one (``modelevel.past_modes``, as ``step``
reads it) and, where it holds, left to ``step``.

Most rows past their segment's nights are a kernel after a step of its level, one level: its
best split in two leaves parts closer than ``MODE_SEPARATION`` spreads. The two-level screen
rules those out together, not with a ``two_modes`` of tens of microseconds a row.
"""

from __future__ import annotations

import math

import numpy as np

from rules.stats.constants import (
    MAD_SCALE,
    MIN_MODE_HISTORY,
    MIN_MODE_NIGHTS,
    MIN_MODE_SHARE,
    MODE_CARRY_SEPARATION,
    MODE_DIFF_SHARE,
    MODE_LEVEL_HISTORY,
    MODE_SEPARATION,
    REPLAY_TOLERANCE,
)
from rules.stats.modelevel import fence, past_modes, quantiles_at
from rules.stats.modes import best_split
from rules.stats.options import GateOptions
from rules.stats.robust import BoolArray, FloatArray, IntArray, row_medians


def past_modes_rows(
    history: FloatArray, start: int, alive: BoolArray, opts: GateOptions
) -> BoolArray:
    """Rows ``step`` may judge against a mode (``modelevel.mode_level``): left to ``step``.

    ``history``: a group's nights up to the newest, its segment from ``start``. Only rows whose
    newest night starts a run (``alive``) can: the others are read no further.
    """
    past = np.zeros(history.shape[0], dtype=bool)
    rows = np.flatnonzero(alive)
    if rows.size:
        past[rows] = _past_modes_of(history[rows], start, opts)
    return past


def _past_modes_of(history: FloatArray, start: int, opts: GateOptions) -> BoolArray:
    """``past_modes_rows`` of rows that all start a run, for each run length."""
    width = history.shape[1]
    size = np.max(np.abs(history[:, start:]), axis=1)
    past = np.zeros(history.shape[0], dtype=bool)
    for k in range(1, opts.pool_runs + 1):
        if width - k - start < MODE_LEVEL_HISTORY:
            break
        rows = _beyond_inner_nights(history[:, start : width - k], history[:, width - k :])
        rows = rows[~past[rows]]
        if rows.size:
            past[rows] = _past_modes_at(history[rows], start, k, size[rows], opts)
    return past


def _beyond_inner_nights(segment: FloatArray, run: FloatArray) -> IntArray:
    """The rows whose run lies beyond the inner order statistics every fence keeps.

    The ``MIN_MODE_SHARE`` quantiles lie between the order statistics ``quantiles_at`` names
    and the next, and ``fence`` widens them: the night after the low quantile's and the night
    at the high quantile's are always kept. A run past every kept night is past those: below,
    at most ``i + 1`` nights lie at or below its highest night. Counting them costs no sort.
    """
    n = segment.shape[1]
    i, j, _, _ = quantiles_at(n)
    under = (segment <= run.max(axis=1)[:, None]).sum(axis=1) <= i + 1
    over = (segment >= run.min(axis=1)[:, None]).sum(axis=1) <= n - 1 - j
    return np.flatnonzero(under | over)


def _past_modes_at(
    history: FloatArray, start: int, k: int, size: FloatArray, opts: GateOptions
) -> BoolArray:
    """Whether each row's ``k``-night run is past both modes of its segment (``past_modes``)."""
    width = history.shape[1]
    segment, run = history[:, start : width - k], history[:, width - k :]
    low, high = fence(np.sort(segment, axis=1))
    below, above = _past_kept(segment, run, (low, high), size)
    past = np.zeros(history.shape[0], dtype=bool)
    rows = np.flatnonzero(below | above)
    if not rows.size:
        return past
    kept = (segment[rows] >= low[rows, None]) & (segment[rows] <= high[rows, None])
    may = _may_be_two_level(segment[rows], kept, size[rows], opts)
    for r in rows[may]:
        sides = [sign for sign, side in ((-1, below), (1, above)) if side[r]]
        found = (past_modes(segment[r], run[r], sign, opts.noise_floor) for sign in sides)
        past[r] = any(modes is not None for modes in found)
    return past


def _past_kept(
    segment: FloatArray, run: FloatArray, bounds: tuple[FloatArray, FloatArray], size: FloatArray
) -> tuple[BoolArray, BoolArray]:
    """The rows whose run may lie below, and above, the outermost of their kept nights.

    ``bounds``: each row's ``fence``. The fence narrowed and that night moved out by the
    rounding the two computations can differ by, so that no row ``past_modes`` reads as past
    is left out.
    """
    slack = REPLAY_TOLERANCE * size[:, None]
    inside = (segment >= bounds[0][:, None] + slack) & (segment <= bounds[1][:, None] - slack)
    floor = np.where(inside, segment, np.inf).min(axis=1)[:, None]
    ceiling = np.where(inside, segment, -np.inf).max(axis=1)[:, None]
    below = np.asarray(np.all(run < floor + slack, axis=1), dtype=bool)
    return below, np.asarray(np.all(run > ceiling - slack, axis=1), dtype=bool)


def _may_be_two_level(
    segment: FloatArray, kept: BoolArray, size: FloatArray, opts: GateOptions
) -> BoolArray:
    """Rows whose kept nights may split into modes far enough apart for ``past_modes``.

    ``kept``: the nights within each row's ``fence`` (the same formula as ``past_modes``'s,
    so the same nights). They are grouped by their count: each group is a dense matrix.
    """
    may = np.ones(segment.shape[0], dtype=bool)
    counts = kept.sum(axis=1)
    for count in np.unique(counts):
        rows = np.flatnonzero(counts == count)
        nights = segment[rows][kept[rows]].reshape(rows.size, int(count))
        may[rows] = _modes_apart(nights, size[rows], opts.noise_floor)
    return may


def _modes_apart(nights: FloatArray, size: FloatArray, floor: float) -> BoolArray:
    """Whether ``two_modes`` of each row may find its modes far enough apart.

    ``MODE_SEPARATION`` units and ``MODE_CARRY_SEPARATION`` within-mode spreads, as its first
    tests and ``past_modes`` read them, row by row.
    """
    n = nights.shape[1]
    least = max(MIN_MODE_NIGHTS, math.ceil(MIN_MODE_SHARE * n))
    if n < MIN_MODE_HISTORY or 2 * least > n:
        return np.zeros(nights.shape[0], dtype=bool)
    ordered = np.sort(nights, axis=1)
    cut = best_split(ordered, least)
    low, high = _part_medians(ordered, 0, cut), _part_medians(ordered, cut, n)
    is_low = nights < ((low + high) / 2)[:, None]
    resid = np.where(is_low, nights - low[:, None], nights - high[:, None])
    spread = np.maximum(
        MAD_SCALE * row_medians(np.sort(np.abs(resid), axis=1)),
        floor * np.abs(row_medians(ordered)),
    )
    steps = np.sort(np.abs(np.diff(nights, axis=1)), axis=1)
    unit = np.maximum(spread, MODE_DIFF_SHARE * (MAD_SCALE * row_medians(steps) / math.sqrt(2)))
    apart = high - low + REPLAY_TOLERANCE * size
    return np.asarray(
        (apart >= MODE_SEPARATION * unit) & (apart >= MODE_CARRY_SEPARATION * spread), dtype=bool
    )


def _part_medians(ordered: FloatArray, begin: int | IntArray, end: int | IntArray) -> FloatArray:
    """The median of each sorted row's values from ``begin`` to ``end`` (``fast_median``'s)."""
    rows, count = np.arange(ordered.shape[0]), end - begin
    first, second = ordered[rows, begin + (count - 1) // 2], ordered[rows, begin + count // 2]
    return np.asarray(first / 2 + second / 2, dtype=float)
