"""Change points of nightly series, the levels between them and each change's commit range.

Shared by the digest's percent-of-roof sections (``build``) and its time sections
(``events``). Inputs are frames of ``build.prepare_history`` (sorted by ``series`` then time,
with ``series`` and ``pos`` columns); every series is scanned at once as one 2-D array.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

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
from service.digest.seriesrows import first_rows
from service.digest.workers import Result, Workers

IntArray = npt.NDArray[np.int64]
#: (series, position) of change points.
Cells = tuple[IntArray, IntArray]
#: Some series' values, one row a series and one column a night.
Slab = npt.NDArray[np.float64]


def series_starts(frame: pd.DataFrame) -> IntArray:
    """Row offset of the first row of each series (frame sorted by ``series``)."""
    return first_rows(frame["series"].to_numpy())


#: The series are scanned in this many slabs, each whole groups of ``change_points_many``'s
#: own (rows of ``BLOCK_POINTS`` points, ``BLOCKS_PLACED_TOGETHER`` blocks), which it scans
#: independently, so the changes are the same: the whole 2-D array and the scan's scores were
#: 0.8 GB at 32,000 series x 913 nights.
SLABS = 8


#: Slabs a worker is given before the scan's cells are asked for (``_start_cells``).
SLABS_AHEAD_A_WORKER = 2


#: Points (series x nights) from which the slabs are scanned in worker processes
#: (``service.digest.workers``). Each worker starts fresh (``spawn``) and imports the scan,
#: about a second; below this size that costs more than it saves (a fleet's 32,000 series x
#: 913 nights is 29 M points).
PARALLEL_POINTS = 8_000_000


def _slab_cells(first: int, matrix: Slab, options: ChangePointOptions) -> Cells:
    """(series, position) of every change point of the slab whose first series is ``first``."""
    rows, positions = np.nonzero(change_points_many(matrix, options=options).is_change)
    return rows.astype(np.int64) + first, positions.astype(np.int64)


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


def _start_cells(
    frame: pd.DataFrame, value: str, options: DigestOptions, workers: Workers
) -> Result[Cells]:
    """(series, position) of every change point, in row-major order, a slab at a time.

    A large history's first slabs go to the workers now, two a worker, and the rest when the
    cells are asked for: this process may do other work meanwhile (the time scan's slabs
    beside the vanished kernels), and holds half the slabs then, not all (0.2 GB at 29 M
    points). Otherwise each slab is made and scanned here, one at a time, when the cells are
    asked for. The slabs are scanned independently either way, so the cells are the same.
    """
    points = (int(frame["series"].max()) + 1) * (int(frame["pos"].max()) + 1)
    scan = options.change_point_options()
    slabs = _slabs(frame, value)
    if points < PARALLEL_POINTS or not workers.parallel:
        return lambda: _joined([_slab_cells(*slab, scan) for slab in slabs])
    first = itertools.islice(slabs, SLABS_AHEAD_A_WORKER * workers.count)
    pending = [workers.submit(_slab_cells, *slab, scan) for slab in first]

    def gathered() -> Cells:
        pending.extend(workers.submit(_slab_cells, *slab, scan) for slab in slabs)
        found = [cells() for cells in pending]
        pending.clear()  # the slabs, kept for a failing worker, go
        return _joined(found)

    return gathered


def _joined(cells: list[Cells]) -> Cells:
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


Changes = tuple[pd.DataFrame, Segments]


def detect_changes(
    frame: pd.DataFrame, options: DigestOptions, value: str = "percent_of_roof"
) -> Changes:
    """Every change point of every series, with its levels and commit range.

    Args:
        frame: Output of ``prepare_history``.
        options: Detector thresholds, the minimum segment and the workers a large scan may use.
        value: The measure scanned (``percent_of_roof`` or ``time_s``).

    Returns:
        One row per change (``row``, ``series``, ``seg``, ``kernel_key``, ``kernel_name``,
        ``device``, ``since``, ``held_at`` (``held_at``), ``from_commit``, ``to_commit``,
        ``before``, ``after``, ``relative_change``; ``min_effect`` or more of it), and the
        segments the changes delimit (those of smaller changes too).
    """
    with Workers(options.workers) as workers:
        return scan_changes(frame, options, workers, value)()


def scan_changes(
    frame: pd.DataFrame, options: DigestOptions, workers: Workers, value: str = "percent_of_roof"
) -> Result[Changes]:
    """``detect_changes``, started: a large scan runs in ``workers`` until its result is wanted."""
    if frame.empty:
        none = np.zeros(0, np.int64)
        segments = segment_levels(frame, none, value)
        return lambda: (_describe(frame, none, segments, options.min_segment), segments)
    cells = _start_cells(frame, value, options, workers)
    return lambda: _changes_of(frame, cells(), options, value)


def _changes_of(frame: pd.DataFrame, cells: Cells, options: DigestOptions, value: str) -> Changes:
    series, pos = cells
    rows = _held(frame, (series_starts(frame)[series] + pos).astype(np.int64), options.min_segment)
    segments = segment_levels(frame, rows, value)
    worse = -1.0 if value == "percent_of_roof" else 1.0  # a drop of percent, a rise of time
    returns = _returns(frame[value].to_numpy(), rows, segments, options, worse)
    if len(returns):
        rows = np.union1d(rows, returns)
        segments = segment_levels(frame, rows, value)
    changes = _describe(frame, rows, segments, options.min_segment)
    return _large(changes, options.min_effect), segments


def _large(changes: pd.DataFrame, min_effect: float) -> pd.DataFrame:
    """The changes whose reported figure, the change of segment medians, is ``min_effect`` or more.

    The scan tests each night's windows (their means, at ``min_effect`` too), but a change is
    reported by the medians of its whole segments, and a split of ``_returns`` is tested by
    neither: a bimodal kernel read as "-0.4 %, new regression". The segments stay as they are
    (a smaller change still bounds the levels a recovery is read from).
    """
    large = changes["relative_change"].abs() >= min_effect
    return changes[large.to_numpy()].reset_index(drop=True)


def _returns(
    values: npt.NDArray[np.float64],
    rows: IntArray,
    segments: Segments,
    options: DigestOptions,
    worse: float,
) -> IntArray:
    """The rows where a level after a change came back to the level before it, unsplit.

    The window scan tells a level's start from its end once it has held about half its
    shortest window: a kernel 20% slower for three nights, then back, had one change and a
    level between the two, "-10%, unresolved" in the digest. A segment whose first nights
    (at least ``min_segment``) are all away from the level before its change, on the
    ``worse`` side (-1: below, +1: above), and the rest (as many) all back (``_back_from``)
    holds two levels: it is split there. A short gain that went back is left whole: split,
    its way back would be a regression unresolved until the gain came back.
    """
    seg = np.searchsorted(segments.bounds, rows)
    ends = np.append(segments.bounds[1:], len(values))[seg]
    before = segments.level[seg - 1]
    room = ends - rows >= 2 * options.min_segment
    found = []
    for row, end, level in zip(rows[room], ends[room], before[room], strict=True):
        back = _back_from(worse * (values[row:end] / level - 1.0), options)
        if back:
            found.append(row + back)
    return np.asarray(found, dtype=np.int64)


def _back_from(worse_by: npt.NDArray[np.float64], options: DigestOptions) -> int:
    """The first night from which a level stays back; 0: none.

    ``worse_by`` is each night's change from the level before, positive when worse. Away is
    worse by more than ``recovery_tolerance``; back is the rest, as ``classify`` reads a
    recovery (a return that overshoots is one). Each side needs ``min_segment`` nights.
    """
    least = options.min_segment
    away = worse_by > options.recovery_tolerance
    back = ~away & ~np.isnan(worse_by)
    first = int(np.argmax(back))
    held = away[0] and least <= first <= len(back) - least and bool(back[first:].all())
    return first if held else 0


def _held(frame: pd.DataFrame, rows: IntArray, min_segment: int) -> IntArray:
    """The change rows whose new level lasts ``min_segment`` nights before the next change.

    The detector's refinement may move a change close to the end of a series; a level seen for
    fewer nights is not reported yet (it will be, once it has held).
    """
    bounds = np.append(np.union1d(series_starts(frame), rows), len(frame))
    following = bounds[np.searchsorted(bounds, rows) + 1]
    held: IntArray = rows[following - rows >= min_segment]
    return held


def held_at(frame: pd.DataFrame, rows: IntArray, min_segment: int) -> pd.Series:
    """The night each level starting at ``rows`` had held ``min_segment`` nights: when it is known.

    A change is reported in the period of that night, not of its first: one that began on a
    period's last night is too young for that period's digest and, begun before the next,
    was left out of both.
    """
    return pd.Series(frame["timestamp"].array[rows + (min_segment - 1)])


def _describe(
    frame: pd.DataFrame, rows: IntArray, segments: Segments, min_segment: int
) -> pd.DataFrame:
    seg = np.searchsorted(segments.bounds, rows)
    changes = frame.iloc[rows][["series", "kernel_key", "kernel_name", "device"]].copy()
    changes.insert(0, "row", pd.Series(rows, index=changes.index))
    changes["seg"] = seg
    changes["since"] = frame["timestamp"].array[rows]
    changes["held_at"] = held_at(frame, rows, min_segment).array
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
