"""The level a new value is judged against: the level since the last confirmed change.

A baseline that mixes two levels (before and after a real change) is wrong both ways: the
gate keeps alerting on the old level, or a new drop hides in the widened spread. So the
level is the robust location of the *current segment* only: the points after the last
change the offline detector (``change_points_many``) finds, or after the start of a trailing
run of ``confirm_runs`` or more points beyond noise (a change the gate itself confirmed
before the detector has enough points to place it).

The noise is the detector's per-series noise (scaled MAD of first differences / sqrt 2),
which a step does not inflate, floored at ``noise_floor`` of the level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np
import numpy.typing as npt

from rules.stats.changepoints import change_points_many
from rules.stats.constants import CLIP_Z, MAD_SCALE, MIN_DETECTED_POINTS, MIN_SD_POINTS
from rules.stats.options import ChangePointOptions
from rules.stats.robust import FloatArray, _location, fast_median


@dataclass(frozen=True)
class Level:
    """The current level of one series.

    Attributes:
        level: Robust location of the current segment (trimmed mean from 8 points, else the
            median); NaN without enough points.
        noise: Noise of one value, in value units (floored).
        n: Points in the current segment.
        start: Index (in the NaN-free series) where the current segment starts.
        se: Standard error of ``level`` in ``noise`` units.
        points: Points the noise was estimated from (its uncertainty widens thresholds).
    """

    level: float
    noise: float
    n: int
    start: int
    se: float
    points: int = 0

    @property
    def scale(self) -> float:
        """Spread of a new value around the level: its noise and the level's own error."""
        return self.noise * math.sqrt(1 + self.se**2)

    def z(self, value: float) -> float:
        """Robust z of ``value`` against the level (the level's own error included)."""
        scale = self.scale
        if not scale > 0:
            return math.copysign(math.inf, value - self.level) if value != self.level else 0.0
        return (value - self.level) / scale


NO_LEVEL = Level(math.nan, math.nan, 0, 0, math.nan)


def clean(series: npt.ArrayLike) -> FloatArray:
    """``series`` as a flat float array without NaNs."""
    arr = np.asarray(series, dtype=float).ravel()
    return np.asarray(arr[~np.isnan(arr)], dtype=float)


def _padded(rows: list[FloatArray]) -> FloatArray:
    """Rows of different lengths as one array, NaN-padded at the front (oldest side)."""
    width = max((r.size for r in rows), default=0)
    out = np.full((len(rows), max(width, 1)), np.nan)
    for i, row in enumerate(rows):
        if row.size:
            out[i, width - row.size :] = row
    return out


def segment_starts(rows: list[FloatArray], min_points: int = 1) -> tuple[list[int], FloatArray]:
    """Per row: where its last change point starts the current level, and its noise.

    A change whose new level holds fewer than ``min_points`` points is not used yet (the gate
    confirms a change over ``confirm_runs`` values, the detector must not do it sooner).
    """
    matrix = _padded(rows)
    scan = change_points_many(matrix, options=ChangePointOptions())
    return _last_starts(scan.is_change, rows, min_points), np.asarray(scan.noise, dtype=float)


def _last_starts(
    is_change: npt.NDArray[np.bool_], rows: list[FloatArray], min_points: int
) -> list[int]:
    """Per row, its last change of ``is_change`` with enough points after it (0: none).

    A row ends at the matrix's last column, so "``min_points`` after it" is one column bound
    for every row: the rows are read at once, not one ``flatnonzero`` each (2,000 a check).
    """
    width = is_change.shape[1]
    usable = is_change[:, : max(width - max(min_points, MIN_DETECTED_POINTS) + 1, 0)]
    if not usable.size:
        return [0] * len(rows)
    last = usable.shape[1] - 1 - np.argmax(usable[:, ::-1], axis=1)
    offsets = width - np.fromiter((r.size for r in rows), dtype=np.intp, count=len(rows))
    return cast(list[int], np.where(usable.any(axis=1), last - offsets, 0).tolist())


def _spread(segment: FloatArray, location: float, noise: float) -> float:
    """The larger of the detector's noise and the segment's clipped standard deviation.

    A MAD from 30 nights is off by 20% one time in ten; a kernel whose noise is
    underestimated is where false alarms come from, and thousands of kernels always hold a
    few. The standard deviation of the residuals within ``CLIP_Z`` robust spreads (bad
    nights left out) is twice as efficient, and the larger of the two estimates is rarely
    far below the truth.
    """
    base = noise if math.isfinite(noise) else 0.0
    if segment.size < MIN_SD_POINTS:
        return base
    resid = segment - location
    mad = MAD_SCALE * fast_median(np.abs(resid))
    kept = resid[np.abs(resid) <= CLIP_Z * mad]
    if kept.size < MIN_SD_POINTS:
        return base
    return max(base, float(np.sqrt(np.sum(kept**2) / (kept.size - 1))))


def within_spread(resid: FloatArray, noise: float) -> float:
    """``_spread`` of residuals already centred (each night minus its own level)."""
    return _spread(resid, 0.0, noise)


def level_of(values: FloatArray, start: int, noise: float, floor: float) -> Level:
    """The level of ``values[start:]`` with the series' ``noise`` (floored)."""
    segment = values[start:]
    if segment.size == 0:
        return NO_LEVEL
    location, factor = _location(segment)
    used = max(_spread(segment, location, noise), floor * abs(location))
    se = factor / math.sqrt(segment.size)
    return Level(location, used, int(segment.size), start, se, int(values.size))
