"""Change points in nightly series: ``change_points`` and ``change_points_many``.

A multi-scale two-window robust detector (``rules.stats.windows``): windows shrink at the ends
of the series, so a large change is found two nights after it; long windows find small changes
on noisy series. Candidates are placed, checked against a slow drift and confirmed over whole
segments (``rules.stats.refine``). The scan is numpy over a 2-D array, so thousands of series
are scanned at once.

The thresholds come from ``tests/bench/bench_detection.py`` (the table is in
tests/bench/README.md, "Detection quality"): tuned on one seed, reported on another.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from rules.stats.constants import BLOCK_POINTS, BLOCKS_PLACED_TOGETHER
from rules.stats.options import ChangePointOptions
from rules.stats.placement import place
from rules.stats.refine import _confirm, _refine
from rules.stats.robust import Direction, FloatArray
from rules.stats.windows import (
    ChangePointScan,
    _drift,
    _local_maxima,
    _series_noise,
    scale_scans,
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
class _Windows:
    """The window scan of one block: its detrended values, candidates and their scales."""

    values: FloatArray
    scan: ChangePointScan
    scales: npt.NDArray[np.int_]


def _window_block(values: FloatArray, opts: ChangePointOptions) -> _Windows:
    drift = _drift(values) if opts.detrend else np.zeros(values.shape[0])
    values = np.asarray(values - drift[:, None] * np.arange(values.shape[1]), dtype=float)
    noise = _series_noise(values, opts.noise_floor)
    best_z, best_rel = np.zeros(values.shape), np.zeros(values.shape)
    scales = np.zeros(values.shape, dtype=int)
    candidates = np.zeros(values.shape, dtype=bool)
    # Both windows must hold ``min_segment`` points of the row: a block narrower than two
    # segments has no change (a repository's first nights), and its scans find none.
    scans = scale_scans(values, noise, opts) if values.shape[1] >= 2 * opts.min_segment else ()
    for w, (z, rel, ok) in scans:
        peaks = _local_maxima(np.where(ok, np.abs(z), 0.0), w)
        stronger = ok & (np.abs(z) > np.abs(best_z))
        best_z = np.where(stronger, z, best_z)
        best_rel = np.where(stronger, rel, best_rel)
        scales = np.where(stronger | (peaks & (scales == 0)), w, scales)
        candidates |= peaks
    return _Windows(values, ChangePointScan(candidates, best_z, best_rel, noise, drift), scales)


def _scan_blocks(blocks: list[_Windows], opts: ChangePointOptions) -> list[ChangePointScan]:
    """Place the candidates of several blocks in one call, then refine and confirm each block.

    One call groups more candidates of a neighbourhood size into each array (each candidate's
    arithmetic is its own, so the same bits as block by block).
    """
    is_change = np.vstack([b.scan.is_change for b in blocks])
    rows, cols = np.nonzero(is_change)
    placed = place(
        np.vstack([b.values for b in blocks]),
        (rows, cols),
        np.vstack([b.scales for b in blocks])[rows, cols],
        np.concatenate([b.scan.noise for b in blocks]),
        min_segment=opts.min_segment,
        detrend=opts.detrend,
    )
    strength = np.abs(np.concatenate([b.scan.z[b.scan.is_change] for b in blocks]))
    found = _refine(is_change.shape, (rows, cols), strength, placed, min(opts.windows))
    scans, start = [], 0
    for block in blocks:
        end = start + block.values.shape[0]
        mine = found[start:end]
        if opts.confirm_z is not None:
            mine = _confirm(block.values, mine, opts.confirm_z, opts.noise_floor)
        scans.append(ChangePointScan(mine, *(getattr(block.scan, n) for n in _FIELDS[1:])))
        start = end
    return scans


_FIELDS = ("is_change", "z", "relative_change", "noise", "drift")


def change_points_many(
    series: pd.DataFrame | npt.ArrayLike,
    *,
    options: ChangePointOptions | None = None,
    block_rows: int | None = None,
) -> ChangePointScan:
    """Scan many series at once: rows are series, columns are points in time (NaN = absent).

    Args:
        series: A 2-D array or a DataFrame (rows = series, e.g. kernels; columns = nights).
        options: Thresholds (``ChangePointOptions`` defaults when None).
        block_rows: Rows per block, to bound memory (default: ``BLOCK_POINTS`` points).

    Returns:
        A ``ChangePointScan`` with arrays shaped like ``series``.
    """
    opts = options or ChangePointOptions()
    values = np.atleast_2d(np.asarray(series, dtype=float))
    if values.shape[1] == 0:
        empty = np.zeros(values.shape)
        absent = np.full(values.shape[0], np.nan)
        return ChangePointScan(empty.astype(bool), empty, empty, absent, absent)
    block_rows = block_rows or max(1, BLOCK_POINTS // values.shape[1])
    # Each block is written into arrays of the whole shape: no list of blocks to concatenate
    # (twice the memory: 0.5 GB at 32,000 series x 913 nights).
    rows = values.shape[0]
    out = ChangePointScan(
        np.zeros(values.shape, dtype=bool),
        np.zeros(values.shape),
        np.zeros(values.shape),
        np.zeros(rows),
        np.zeros(rows),
    )
    step = block_rows * BLOCKS_PLACED_TOGETHER
    for i in range(0, rows, step):
        starts = range(i, min(rows, i + step), block_rows)
        blocks = [_window_block(values[j : j + block_rows], opts) for j in starts]
        for j, block in zip(starts, _scan_blocks(blocks, opts), strict=True):
            for name in _FIELDS:
                getattr(out, name)[j : j + block_rows] = getattr(block, name)
    return out


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
