"""Change points in nightly series: ``change_points`` and ``change_points_many``.

A multi-scale two-window robust detector (``rules.stats.windows``): windows shrink at the ends
of the series, so a large change is found two nights after it; long windows find small changes
on noisy series. Candidates are placed, checked against a slow drift and confirmed over whole
segments (``rules.stats.refine``). The scan is numpy over a 2-D array, so thousands of series
are scanned at once.

The thresholds come from ``tests/bench/bench_detection.py`` (the table is in
.github/CONTRIBUTING.md, "Detection quality"): tuned on one seed, reported on another.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

from rules.stats.refine import _confirm, _refine
from rules.stats.robust import Direction, FloatArray
from rules.stats.windows import _drift, _local_maxima, _one_scale, _series_noise


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
