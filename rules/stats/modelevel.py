"""A run past both modes of a two-level segment, judged in the within-mode noise.

On a two-level segment (``rules.stats.modes``) the segment's noise holds the kernel's own
switching: a real runner alternating 0 / +9% had 3.9% of it and 1.5-1.6% within a mode, so a 9%
drop below both modes read z -2.3 and was missed. A run past both modes is judged against the
mode on its side, in the within-mode noise (``mode_level``), where the modes are read well
(``past_modes``): from ``MODE_LEVEL_HISTORY`` nights of the segment or more, its strays fenced
off (``fenced``), the modes ``MODE_CARRY_SEPARATION`` spreads apart, and no night of the
segment already past them on the run's side. ``rules.stats.runs`` judges the run with it;
``rules.stats.batchreplay`` leaves the nights where it may apply to ``runs.step``.
"""

from __future__ import annotations

import math
from functools import lru_cache

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


def fence(ordered: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The bounds of ``fenced`` of each sorted row of ``ordered`` (its last axis).

    ``MODE_FENCE`` times the width between the ``MIN_MODE_SHARE`` quantiles (linear between
    order statistics) beyond them: each mode holds that share, so the quantiles lie at or
    between the modes.
    """
    low = _quantile(ordered, MIN_MODE_SHARE)
    high = _quantile(ordered, 1 - MIN_MODE_SHARE)
    width = MODE_FENCE * (high - low)
    return low - width, high + width


def _quantile(ordered: FloatArray, q: float) -> FloatArray:
    at = q * (ordered.shape[-1] - 1)
    i = min(int(at), ordered.shape[-1] - 2)
    below, above = ordered[..., i], ordered[..., i + 1]
    return np.asarray(below + (at - i) * (above - below), dtype=float)


def fenced(segment: FloatArray) -> FloatArray:
    """``segment`` without its strays (outside ``fence``), for ``mode_level``.

    A night at half the level is no mode's, and would take the best split of ``two_modes``.
    """
    low, high = fence(np.sort(segment))
    return np.asarray(segment[(segment >= low) & (segment <= high)], dtype=float)


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

    Read from ``MODE_LEVEL_HISTORY`` nights or more, strays fenced off (``fenced``); the modes
    ``MODE_CARRY_SEPARATION`` spreads apart (a noisy level with a small step passes for two
    modes close together, and its "within-mode" noise is too narrow), and no night of the
    segment already past them on the run's side (a kernel that scattered there before is no
    two-level runner, and a night there is no news).
    """
    kept = fenced(segment) if segment.size >= MODE_LEVEL_HISTORY else segment[:0]
    if kept.size < MODE_LEVEL_HISTORY:
        return None
    # Past both modes where no night of the segment is: past its outermost night (a cheap
    # test that most nights fail, ``batchreplay`` certifies with it).
    if not np.all(sign * (run - (kept.min() if sign < 0 else kept.max())) > 0):
        return None
    modes = _two_modes_of(kept.tobytes(), floor)
    if (
        modes is None
        or modes.high - modes.low < MODE_CARRY_SEPARATION * modes.spread
        or not all(modes.beyond(float(v), sign) for v in run)
        or any(modes.beyond(float(v), sign) for v in kept)
    ):
        return None
    return modes, kept


@lru_cache(maxsize=4096)
def _two_modes_of(nights: bytes, floor: float) -> Modes | None:
    """``two_modes`` of a segment given as its bytes (kept: a replay reads each twice or more).

    A night's two-night run and the night before's one-night run share their segment.
    """
    return two_modes(np.frombuffer(nights, dtype=float), floor)
