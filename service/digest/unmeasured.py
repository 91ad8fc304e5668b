"""Devices the period did not measure: a stopped runner must not read as a quiet week.

The digest counts what changed among the nights it has. A card whose nightly job stopped (a
runner down, a workflow broken, a self-hosted machine taken for other work) has no nights in
the period, and its kernels dropped out of every section: the digest of a week in which
nothing ran read "0 regressions", as a quiet week does. A device with nightly runs in the
lookback and none in the period is named, with its last night. One that another card took
over from (a card whose first night came within ``TAKEOVER_GAP`` after its last) is not,
even once that card stopped too: that is a device change, named in the week it happened, not
a silence.

Here below ``service.digest.model``, as ``service.digest.sharedmove``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pandas as pd
from pydantic import BaseModel

from service.digest.seriesrows import first_rows, last_rows

#: A card whose first night comes this soon after another's last took over from it (a swap);
#: one added later, beside a card still running, did not.
TAKEOVER_GAP = timedelta(days=7)


class UnmeasuredDevice(BaseModel):
    """A device with nightly runs before the period and none in it.

    Attributes:
        device: Device as stored.
        last_night: Its newest nightly run, before the period.
        last_commit: That run's commit.
        kernels: Kernels measured that night: none of them is judged in the period.
    """

    device: str
    last_night: datetime
    last_commit: str
    kernels: int


def unmeasured_devices(nights: pd.DataFrame, *, start: datetime) -> list[UnmeasuredDevice]:
    """The devices of ``nights`` with no row from ``start`` on that no card took over from.

    ``nights``: prepared nightly rows up to the period's end (``service.digest.build``:
    sorted by series, then time). Oldest silence first. Read from each series' first and
    last rows only (32,000 of 29 M rows at 8,000 kernels on 4 cards).
    """
    if nights.empty:
        return []
    firsts, lasts = first_rows(nights["series"].to_numpy()), last_rows(nights)
    columns = ["device", "timestamp", "commit", "kernel_key"]
    ends = nights.iloc[lasts][columns]  # the rows first: a column copy is 29 M rows
    began = nights["timestamp"].iloc[firsts].groupby(ends["device"].to_numpy()).min()
    last = ends.groupby("device")["timestamp"].max()
    found = []
    for device, stamp in last[last < pd.Timestamp(start)].sort_values().items():
        # A card that started right after it stopped took over (a device change), whether or
        # not that card still runs: a retired card is not silent once its successor is.
        if ((began > stamp) & (began <= stamp + TAKEOVER_GAP)).any():
            continue
        night = ends[(ends["device"] == device) & (ends["timestamp"] == stamp)]
        found.append(
            UnmeasuredDevice(
                device=str(device),
                last_night=stamp.to_pydatetime(),
                last_commit=str(night["commit"].iloc[0]),
                kernels=len(night),  # its kernels' last nights are all that night
            )
        )
    return found
