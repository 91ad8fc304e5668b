"""When the digest first knew each change: the period that reports it as new.

A change is new in a period when the scan finds it on the history through the period's end
and did not on the history through its start (the previous period's end). The scan needs
about half its shortest window (4 nights) at a new level to find it, so a step in a period's
last nights is too young for that period's digest and is the next one's, with its ``since``
before that period. Counted by the night it had held ``min_segment`` nights instead
(``changes.held_at``), such a step was in neither digest.

Only the series with a change that began shortly before the period (``RESCAN_WINDOWS`` scan
windows) or in it are scanned again, cut at the period's start: the others' changes were
found long before it. The change-point scan reads each series alone, so the cut scan of a
few series finds what the whole history's would.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pandas as pd

from service.digest.changes import IntArray, scan_changes, series_starts
from service.digest.options import DigestOptions
from service.digest.workers import Workers

#: Scan windows before the period's first night in which a change that began may still have
#: been unknown at the period's start; its series is scanned again, cut there.
RESCAN_WINDOWS = 2


def with_found(
    frame: pd.DataFrame,
    changes: pd.DataFrame,
    options: DigestOptions,
    workers: Workers,
    *,
    start: datetime,
    value: str = "percent_of_roof",
) -> pd.DataFrame:
    """``changes`` with ``found``: when the digest first knew each (new when in the period).

    A change the scan cut at ``start`` finds too (same series and direction, at most a scan
    window apart) has that scan's ``held_at``, before ``start``; one it does not find has its
    own ``held_at`` or ``start``, whichever is later.
    """
    first = pd.Timestamp(start).tz_convert("UTC")
    cut = _cut_rows(frame, first)
    recent = changes["row"].to_numpy() >= cut[changes["series"].to_numpy()] - _margin(options)
    found = changes["held_at"].copy()
    if not recent.any():
        return changes.assign(found=found)
    young = changes[recent]
    earlier = _found_by_start(frame, young, (options, workers, value), first).astype(found.dtype)
    later = young["held_at"].clip(lower=first).astype(found.dtype)
    found.loc[young.index] = earlier.where(earlier.notna(), later)
    return changes.assign(found=found)


def _margin(options: DigestOptions) -> int:
    """Nights before the period's first whose changes are found again (at least their hold)."""
    return max(RESCAN_WINDOWS * options.window, options.min_segment)


def _cut_rows(frame: pd.DataFrame, start: pd.Timestamp) -> IntArray:
    """Each series' first row at or after ``start`` (its end when it has none)."""
    starts = series_starts(frame)
    before = (frame["timestamp"] < start).to_numpy().astype(np.int64)
    if not len(starts):
        return starts
    return np.asarray(starts + np.add.reduceat(before, starts), dtype=np.int64)


def _found_by_start(
    frame: pd.DataFrame,
    young: pd.DataFrame,
    scan: tuple[DigestOptions, Workers, str],
    start: pd.Timestamp,
) -> pd.Series:
    """For each of ``young``, the ``held_at`` of the change the scan cut at ``start`` matched.

    ``scan``: the digest's options, its workers and the measure scanned.
    """
    options, workers, value = scan
    series = np.unique(young["series"].to_numpy())
    taken = np.flatnonzero(
        np.isin(frame["series"].to_numpy(), series) & (frame["timestamp"] < start).to_numpy()
    )
    if not len(taken):
        return pd.Series(pd.NaT, index=young.index, dtype=young["held_at"].dtype)
    cut = frame.iloc[taken].reset_index(drop=True)
    cut["series"] = np.unique(cut["series"].to_numpy(), return_inverse=True)[1]
    known, _ = scan_changes(cut, options, workers, value)()
    known = known.assign(row=taken[known["row"].to_numpy()])
    return _matched(young, known, options.window)


def _matched(young: pd.DataFrame, known: pd.DataFrame, within: int) -> pd.Series:
    """``held_at`` of the nearest change of ``known`` of the same series and direction."""
    sides = []
    for frame in (young, known):
        part = frame[["row", "held_at"]].assign(
            key=frame["kernel_key"].astype(str) + "\0" + frame["device"].astype(str),
            up=(frame["relative_change"] > 0).to_numpy(),
        )
        sides.append(part.sort_values("row"))
    left, right = sides
    pairs = pd.merge_asof(
        left.reset_index(),
        right.rename(columns={"held_at": "known_at"}),
        on="row",
        by=["key", "up"],
        direction="nearest",
        tolerance=within,
    )
    matched: pd.Series = pairs.set_index("index")["known_at"].reindex(young.index)
    return matched
