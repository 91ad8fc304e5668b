"""A run past both modes of a two-level segment, judged in the within-mode noise.

On a two-level segment (``rules.stats.modes``) the segment's noise holds the kernel's own
switching: a real runner alternating 0 / +9% had 3.9% of it and 1.5-1.6% within a mode, so a 9%
drop below both modes read z -2.3 and was missed. A run past both modes is judged against the
mode on its side, in the within-mode noise (``mode_level``), where the modes are read well
(``past_modes``): from ``MODE_LEVEL_HISTORY`` nights of the segment or more, its strays fenced
off (``fence``), the modes ``MODE_CARRY_SEPARATION`` spreads apart, and no night of the
segment already past them on the run's side. ``rules.stats.runs`` judges the run with it;
``rules.stats.modescreen`` leaves the nights where it may apply to ``runs.step``.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from functools import lru_cache
from typing import TypeVar, cast

import numpy as np

from rules.stats.constants import (
    MEDIAN_SE,
    MIN_MODE_SHARE,
    MODE_CARRY_SEPARATION,
    MODE_FENCE,
    MODE_LEVEL_HISTORY,
)
from rules.stats.levels import Level, within_spread
from rules.stats.modes import Modes, two_modes
from rules.stats.robust import FloatArray

#: A quantile's figures: one segment's (floats) or each row's of many (``fence``).
Value = TypeVar("Value", float, FloatArray)


def fence(ordered: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The bounds a segment's nights are kept within, for each sorted row of ``ordered``.

    ``MODE_FENCE`` times the width between the ``MIN_MODE_SHARE`` quantiles (linear between
    order statistics) beyond them: each mode holds that share, so the quantiles lie at or
    between the modes. A night at half the level is no mode's, and would take the best split
    of ``two_modes``.
    """
    i, j, low_at, high_at = quantiles_at(ordered.shape[-1])
    low = _between(ordered[..., i], ordered[..., i + 1], low_at)
    high = _between(ordered[..., j], ordered[..., j + 1], high_at)
    return _widened(low, high)


def _fence_of(ordered: list[float]) -> tuple[float, float]:
    """``fence`` of one sorted segment given as floats (a night's screen: no numpy calls)."""
    i, j, low_at, high_at = quantiles_at(len(ordered))
    low = _between(ordered[i], ordered[i + 1], low_at)
    return _widened(low, _between(ordered[j], ordered[j + 1], high_at))


def quantiles_at(n: int) -> tuple[int, int, float, float]:
    """Where the ``MIN_MODE_SHARE`` quantiles of ``n`` sorted values lie.

    The order statistic each lies after, and how far along to the next.
    """
    low, high = MIN_MODE_SHARE * (n - 1), (1 - MIN_MODE_SHARE) * (n - 1)
    i, j = min(int(low), n - 2), min(int(high), n - 2)
    return i, j, low - i, high - j


def _between(below: Value, above: Value, at: float) -> Value:
    return below + at * (above - below)


def _widened(low: Value, high: Value) -> tuple[Value, Value]:
    width = MODE_FENCE * (high - low)
    return low - width, high + width


def mode_level(
    segment: FloatArray, run: FloatArray, sign: int, level: Level, floor: float
) -> tuple[Level, FloatArray] | None:
    """The outer mode a run beyond both modes of ``segment`` is judged against, or None.

    ``segment``: the nights of the run's segment before it; ``level``: their level; ``floor``:
    the gate's ``noise_floor``. The run is judged against the mode on its side (``sign``), in
    the within-mode noise: the pooled spread around each night's mode, or the clipped standard
    deviation of those residuals when larger (as a level's is, ``levels.within_spread``), with
    the error of a median of the nights at that mode. Also returns the segment's nights each
    moved onto that mode, so the run's k-night sums are set against within-mode ones
    (``runs.sum_spread``). None unless the modes are read well (``past_modes``).
    """
    found = past_modes(segment, run, sign, floor)
    if found is None:
        return None
    modes, kept = found
    edge = modes.low if sign < 0 else modes.high
    centres = np.where(kept < (modes.low + modes.high) / 2, modes.low, modes.high)
    noise = within_spread(kept - centres, modes.spread)
    se = MEDIAN_SE / math.sqrt(max(1, int(np.count_nonzero(centres == edge))))
    return Level(edge, noise, level.n, level.start, se, level.points), kept - centres + edge


def past_modes(
    segment: FloatArray, run: FloatArray, sign: int, floor: float
) -> tuple[Modes, FloatArray] | None:
    """The modes of ``segment`` (and its fenced nights) when every night of ``run`` is past both.

    Read from ``MODE_LEVEL_HISTORY`` nights or more, strays fenced off (``fence``); the modes
    ``MODE_CARRY_SEPARATION`` spreads apart (a noisy level with a small step passes for two
    modes close together, and its "within-mode" noise is too narrow), and no night of the
    segment already past them on the run's side (a kernel that scattered there before is no
    two-level runner, and a night there is no news).
    """
    if segment.size < MODE_LEVEL_HISTORY:
        return None
    ordered = _floats(np.sort(segment))
    low, high = _fence_of(ordered)
    first, last = bisect_left(ordered, low), bisect_right(ordered, high)
    if not low <= high or last - first < MODE_LEVEL_HISTORY:  # NaN bounds (infinite nights)
        return None
    # Past both modes where no night of the segment is: past its outermost kept night (a
    # cheap test that most nights fail, ``modescreen`` certifies with it).
    edge = ordered[first] if sign < 0 else ordered[last - 1]
    if not all(sign * (v - edge) > 0 for v in _floats(run)):
        return None
    kept = np.asarray(segment[(segment >= low) & (segment <= high)], dtype=float)
    modes = _two_modes_of(kept.tobytes(), floor)
    if (
        modes is None
        or modes.high - modes.low < MODE_CARRY_SEPARATION * modes.spread
        or not all(modes.beyond(float(v), sign) for v in run)
        or modes.beyond(edge, sign)  # the kept night nearest to being past them: none is
    ):
        return None
    return modes, kept


def _floats(values: FloatArray) -> list[float]:
    """A 1-D array as Python floats: a night's few comparisons without numpy's per-call cost."""
    return cast(list[float], values.tolist())


@lru_cache(maxsize=4096)
def _two_modes_of(nights: bytes, floor: float) -> Modes | None:
    """``two_modes`` of a segment given as its bytes (kept: a replay reads each twice or more).

    A night's two-night run and the night before's one-night run share their segment.
    """
    return two_modes(np.frombuffer(nights, dtype=float), floor)
