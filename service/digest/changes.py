"""Change points of nightly series, the levels between them and each change's commit range.

Shared by the digest's percent-of-roof sections (``build``) and its time sections
(``events``). Inputs are frames of ``build.prepare_history`` (sorted by ``series`` then time,
with ``series`` and ``pos`` columns); every series is scanned at once as one 2-D array.
"""

from __future__ import annotations

import itertools
import logging
import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from rules.stats import (
    BLOCK_POINTS,
    BLOCKS_PLACED_TOGETHER,
    ChangePointOptions,
    change_points_many,
)
from service.digest.model import DigestOptions

_log = logging.getLogger(__name__)

IntArray = npt.NDArray[np.int64]
#: Some series' values, one row a series and one column a night.
Slab = npt.NDArray[np.float64]


def series_starts(frame: pd.DataFrame) -> IntArray:
    """Row offset of the first row of each series (frame sorted by ``series``)."""
    return first_rows(frame["series"].to_numpy())


def first_rows(series: npt.NDArray[np.integer[Any]]) -> IntArray:
    """Row offset of the first row of each series (``series`` sorted)."""
    count = int(series[-1]) + 1 if len(series) else 0
    return np.searchsorted(series, np.arange(count), side="left").astype(np.int64)


#: The series are scanned in this many slabs, each whole groups of ``change_points_many``'s
#: own (rows of ``BLOCK_POINTS`` points, ``BLOCKS_PLACED_TOGETHER`` blocks), which it scans
#: independently, so the changes are the same: the whole 2-D array and the scan's scores were
#: 0.8 GB at 32,000 series x 913 nights.
SLABS = 8


#: Points (series x nights) from which the slabs are scanned in worker processes
#: (``DigestOptions.workers``). Each worker starts fresh (``spawn``: nothing of this process's
#: memory or connections is shared) and imports the scan, about a second; below this size
#: that costs more than it saves (a fleet's 32,000 series x 913 nights is 29 M points).
PARALLEL_POINTS = 8_000_000


def usable_cores() -> int:
    """The cores this process may run on."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def _slab_cells(first: int, matrix: Slab, options: ChangePointOptions) -> tuple[IntArray, IntArray]:
    """(series, position) of every change point of the slab whose first series is ``first``."""
    rows, positions = np.nonzero(change_points_many(matrix, options=options).is_change)
    return rows.astype(np.int64) + first, positions.astype(np.int64)


def _scan_slabs(
    slabs: Iterator[tuple[int, Slab]], options: ChangePointOptions, points: int, workers: int
) -> list[tuple[IntArray, IntArray]]:
    """Each slab's change cells: in worker processes for a large scan on several cores.

    The slabs are scanned independently either way, so the cells are the same. Here they are
    made one at a time; for the workers all at once (the series' values, 0.2 GB at 29 M points).
    """
    workers = min(workers, SLABS)
    if points < PARALLEL_POINTS or workers < 2:
        return [_slab_cells(first, matrix, options) for first, matrix in slabs]
    firsts, matrices = zip(*slabs, strict=True)
    spawn = multiprocessing.get_context("spawn")
    try:
        with ProcessPoolExecutor(workers, mp_context=spawn) as pool:
            return list(pool.map(_slab_cells, firsts, matrices, itertools.repeat(options)))
    except (BrokenProcessPool, OSError) as exc:  # no processes here (a sandbox, a frozen app)
        _log.warning("change points: workers failed (%s); scanning in this process", exc)
        return [_slab_cells(*slab, options) for slab in zip(firsts, matrices, strict=True)]


def _slabs(frame: pd.DataFrame, value: str) -> Iterator[tuple[int, Slab]]:
    """The series as 2-D slabs of whole scan groups, each with its first series.

    A slab's row is a series, its column a night (NaN where the series has none).
    """
    series, pos = frame["series"].to_numpy(), frame["pos"].to_numpy()
    values = frame[value].to_numpy(dtype=float)
    count, width = int(series.max()) + 1, int(pos.max()) + 1
    group = max(1, BLOCK_POINTS // width) * BLOCKS_PLACED_TOGETHER
    slab = -(-count // (SLABS * group)) * group  # whole groups, at most SLABS slabs
    starts = np.append(first_rows(series), len(series))
    for first in range(0, count, slab):
        rows = slice(int(starts[first]), int(starts[min(count, first + slab)]))
        matrix: Slab = np.full((min(count, first + slab) - first, width), np.nan)
        matrix[series[rows] - first, pos[rows]] = values[rows]
        yield first, matrix


def _change_cells(
    frame: pd.DataFrame, value: str, options: DigestOptions
) -> tuple[IntArray, IntArray]:
    """(series, position) of every change point, in row-major order, a slab at a time.

    The slabs are scanned here, or in ``options.workers`` processes for a large history.
    """
    points = (int(frame["series"].max()) + 1) * (int(frame["pos"].max()) + 1)
    scan = options.change_point_options()
    cells = _scan_slabs(_slabs(frame, value), scan, points, options.workers)
    return np.concatenate([s for s, _ in cells]), np.concatenate([p for _, p in cells])


@dataclass(frozen=True)
class Segments:
    """Levels between change points: segment ``i`` starts at row ``bounds[i]``.

    Attributes:
        bounds: First row of every segment (series starts and change rows), ascending.
        level: Median value (percent of roof, or time) of each segment.
        series: The series of each segment.
    """

    bounds: IntArray
    level: npt.NDArray[np.float64]
    series: IntArray


def segment_levels(
    frame: pd.DataFrame, change_rows: IntArray, value: str = "percent_of_roof"
) -> Segments:
    """Median ``value`` of every segment between series starts and ``change_rows``."""
    bounds = np.union1d(series_starts(frame), change_rows).astype(np.int64)
    level = _medians(frame[value], bounds)
    return Segments(bounds, level, frame["series"].to_numpy()[bounds])


#: Rows grouped at once for the segments' medians: a group-by of 29 M rows held 0.7 GB.
MEDIAN_ROWS = 1 << 22


def _medians(values: pd.Series, bounds: IntArray) -> npt.NDArray[np.float64]:
    """Median of each segment (rows ``bounds[i]`` up to the next bound).

    Whole segments of about ``MEDIAN_ROWS`` rows at a time: each median is of the same values
    as in one group-by of every row.
    """
    ends = np.append(bounds[1:], len(values))
    levels = []
    first = 0
    while first < len(bounds):
        last = max(int(np.searchsorted(ends, bounds[first] + MEDIAN_ROWS, "right")), first + 1)
        # Segments are runs of rows: numbered by repeating, in 4 bytes.
        seg = np.repeat(
            np.arange(first, last, dtype=np.int32), ends[first:last] - bounds[first:last]
        )
        part = values.iloc[int(bounds[first]) : int(ends[last - 1])]
        levels.append(part.groupby(seg).median().to_numpy())
        first = last
    return (
        np.concatenate(levels)
        if levels
        else values.groupby(np.zeros(0, np.int32)).median().to_numpy()
    )


def detect_changes(
    frame: pd.DataFrame, options: DigestOptions, value: str = "percent_of_roof"
) -> tuple[pd.DataFrame, Segments]:
    """Every change point of every series, with its levels and commit range.

    Args:
        frame: Output of ``prepare_history``.
        options: Detector thresholds and the minimum segment.
        value: The measure scanned (``percent_of_roof`` or ``time_s``).

    Returns:
        One row per change (``row``, ``series``, ``seg``, ``kernel_key``, ``kernel_name``,
        ``device``, ``since``, ``from_commit``, ``to_commit``, ``before``, ``after``,
        ``relative_change``), and the segments the changes delimit.
    """
    if frame.empty:
        none = np.zeros(0, np.int64)
        segments = segment_levels(frame, none, value)
        return _describe(frame, none, segments), segments
    series, pos = _change_cells(frame, value, options)
    rows = _held(frame, (series_starts(frame)[series] + pos).astype(np.int64), options.min_segment)
    segments = segment_levels(frame, rows, value)
    return _describe(frame, rows, segments), segments


def _held(frame: pd.DataFrame, rows: IntArray, min_segment: int) -> IntArray:
    """The change rows whose new level lasts ``min_segment`` nights before the next change.

    The detector's refinement may move a change close to the end of a series; a level seen for
    fewer nights is not reported yet (it will be, once it has held).
    """
    bounds = np.append(np.union1d(series_starts(frame), rows), len(frame))
    following = bounds[np.searchsorted(bounds, rows) + 1]
    held: IntArray = rows[following - rows >= min_segment]
    return held


def _describe(frame: pd.DataFrame, rows: IntArray, segments: Segments) -> pd.DataFrame:
    seg = np.searchsorted(segments.bounds, rows)
    changes = frame.iloc[rows][["series", "kernel_key", "kernel_name", "device"]].copy()
    changes.insert(0, "row", pd.Series(rows, index=changes.index))
    changes["seg"] = seg
    changes["since"] = frame["timestamp"].array[rows]
    # The rows' commits only: a categorical column whole as objects is 0.2 GB at 29 M rows.
    changes["from_commit"] = frame["commit"].iloc[rows - 1].to_numpy() if len(rows) else []
    changes["to_commit"] = frame["commit"].iloc[rows].to_numpy()
    changes["before"] = segments.level[seg - 1] if len(rows) else []
    changes["after"] = segments.level[seg] if len(rows) else []
    changes["relative_change"] = changes["after"] / changes["before"] - 1.0
    return changes.reset_index(drop=True)


def in_period(stamps: pd.Series, start: datetime, end: datetime) -> pd.Series:
    """Which of ``stamps`` lie in ``[start, end]`` (both ends included)."""
    return (stamps >= pd.Timestamp(start)) & (stamps <= pd.Timestamp(end))
