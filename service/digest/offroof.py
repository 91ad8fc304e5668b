"""Kernels off the roof: measured in the period, on the roof before it, timed alone now.

A nightly job whose profile lost its roofline metrics (``ncu`` without ``--set roofline``,
a metric renamed by a new ncu) keeps timing every kernel, so the time sections stay full,
but its kernels drop out of every percent-of-roof section: a fall off the tensor cores is
no longer seen. The ``lost-counters`` rule says so on the night it happens, once; the weekly
digest says it for as long as it lasts (within the lookback), one entry per device.

Here below ``service.digest.model``, as ``service.digest.sharedmove``.
"""

from __future__ import annotations

from datetime import datetime

import pandas as pd
from pydantic import BaseModel

from service.digest.seriesrows import last_rows

#: Kernel names an entry gives (the JSON's count has them all).
EXAMPLES = 5
_KEY = ["device", "kernel_key"]


class OffRoof(BaseModel):
    """A device's kernels whose newest night in the period was timed alone, once placed.

    Attributes:
        device: Device as stored.
        kernels: How many.
        last_on_roof: The newest night one of them was on the roof.
        last_commit: That night's commit.
        examples: Up to ``EXAMPLES`` of their names, the longest-running first.
    """

    device: str
    kernels: int
    last_on_roof: datetime
    last_commit: str
    examples: list[str]


def off_roof(placed: pd.DataFrame, timed: pd.DataFrame, *, start: datetime) -> list[OffRoof]:
    """The kernels of ``timed`` off the roof at their newest night from ``start`` on.

    ``placed`` and ``timed``: the digest's prepared frames of placed and of timed rows (the
    same frame when every timed row is placed: then none is off the roof).
    """
    if timed is placed or timed.empty or placed.empty:
        return []
    now = _series_ends(timed)
    now = now[now["percent_of_roof"].isna() & (now["timestamp"] >= pd.Timestamp(start))]
    before = _series_ends(placed)[[*_KEY, "timestamp", "commit"]]
    lost = now.merge(before, on=_KEY, suffixes=("", "_placed"))
    return [_entry(str(device), rows) for device, rows in lost.groupby("device", sort=True)]


def _series_ends(frame: pd.DataFrame) -> pd.DataFrame:
    """Each series' newest row (a prepared frame: sorted by series, then time)."""
    columns = [*_KEY, "kernel_name", "timestamp", "commit", "percent_of_roof", "time_s"]
    return frame.iloc[last_rows(frame)][columns].reset_index(drop=True)  # rows first: 32,000


def _entry(device: str, rows: pd.DataFrame) -> OffRoof:
    newest = rows.iloc[int(rows["timestamp_placed"].to_numpy().argmax())]
    longest = rows.sort_values("time_s", ascending=False, kind="stable")
    return OffRoof(
        device=device,
        kernels=len(rows),
        last_on_roof=newest["timestamp_placed"].to_pydatetime(),
        last_commit=str(newest["commit_placed"]),
        examples=[str(name) for name in longest["kernel_name"].head(EXAMPLES)],
    )
