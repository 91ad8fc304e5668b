"""The nights before a declared work model's restart are left out of the digest's history.

Editing a work model in roofguard.toml changes percent of roof at the same time: the nightly
check restarts the kernel's history there (``service.pipeline.workchange``, recorded as an
acceptance by roofguard), and the weekly digest listed the step as a regression (or an
improvement) of every kernel the model matched. The digest reads the history the gate reads:
each restarted kernel's series begins at its restart.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np
import pandas as pd

#: (kernel key, device or None for every device, when) of one restart.
Restart = tuple[str, str | None, datetime]


def without_restarted(frame: pd.DataFrame, restarts: Sequence[Restart]) -> pd.DataFrame:
    """``frame`` without each restarted kernel's rows measured up to its (latest) restart."""
    if not restarts or frame.empty:
        return frame
    latest: dict[tuple[str, str | None], datetime] = {}
    for key, device, when in restarts:
        latest[key, device] = max(when, latest.get((key, device), when))
    rows = np.flatnonzero(frame["kernel_key"].isin({key for key, _, _ in restarts}).to_numpy())
    if not len(rows):
        return frame
    keys = frame["kernel_key"].to_numpy()[rows]
    devices = frame["device"].to_numpy()[rows]
    stamps = pd.to_datetime(frame["timestamp"].to_numpy()[rows], utc=True)
    cut = [
        _cut_at(latest, str(key), str(device)) for key, device in zip(keys, devices, strict=True)
    ]
    before = np.array([c is not None and s <= c for c, s in zip(cut, stamps, strict=True)])
    keep = np.ones(len(frame), dtype=bool)
    keep[rows[before]] = False
    return frame if keep.all() else frame[keep].reset_index(drop=True)


def _cut_at(
    latest: dict[tuple[str, str | None], datetime], key: str, device: str
) -> datetime | None:
    """The latest restart of ``key`` on ``device`` (or on every device), None when none."""
    found = [t for t in (latest.get((key, device)), latest.get((key, None))) if t is not None]
    return max(found) if found else None
