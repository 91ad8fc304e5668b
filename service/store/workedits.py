"""The nights before a declared work model's edit, read on the new model's work.

Editing a work model in roofguard.toml changes percent of roof at the same time (the time
does not change): the weekly digest listed the step as a regression (or an improvement) of
every kernel the model matched. The nightly check judges the nights before the edit on the
new work (``service.pipeline.workchange``); the stored history's readers (the digest, the
kernel pages, ``roofguard plot``) do as the check, after its roof re-read
(``service.store.likeforlike.as_checked``): each such night's percent of roof is
``100 * T_roof / T`` with the ``T_roof`` of the kernel's first night after the edit, so a real
slowdown on the night of the edit still shows, in percent and in time.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np
import pandas as pd

from service.store.baselines import latest_edits

#: (kernel key, device or None for every device, when) of one edit (``work_model_edits``).
Edit = tuple[str, str | None, datetime]


def on_new_work(frame: pd.DataFrame, edits: Sequence[Edit]) -> pd.DataFrame:
    """``frame`` with each edited kernel's nights up to its latest edit on the new work."""
    if not edits or frame.empty:
        return frame
    rows = np.flatnonzero(frame["kernel_key"].isin({key for key, _, _ in edits}).to_numpy())
    if not len(rows):
        return frame
    part = pd.DataFrame(
        {
            "key": frame["kernel_key"].to_numpy()[rows].astype(str),
            "device": frame["device"].to_numpy()[rows].astype(str),
            "stamp": pd.to_datetime(frame["timestamp"].to_numpy()[rows], utc=True),
            "percent": frame["percent_of_roof"].to_numpy(dtype=float)[rows],
            "time": frame["time_s"].to_numpy(dtype=float)[rows],
        }
    )
    part["cut"] = pd.to_datetime(pd.Series(_cuts(part, edits), dtype=object), utc=True)
    before = (part["stamp"] <= part["cut"]).to_numpy()
    t_roof = _roof_time_after(part)
    new = 100.0 * part[["key", "device"]].apply(tuple, axis=1).map(t_roof) / part["time"]
    change = before & new.notna().to_numpy()
    if not change.any():
        return frame
    values = frame["percent_of_roof"].to_numpy(dtype=float).copy()
    values[rows[change]] = new.to_numpy(dtype=float)[change]
    out = frame.copy(deep=False)
    out["percent_of_roof"] = values
    return out


def _cuts(part: pd.DataFrame, edits: Sequence[Edit]) -> list[datetime | None]:
    """Each row's latest edit: of its kernel on its card, or on every card."""
    on_card = {device: latest_edits(edits, device) for device in set(part["device"])}
    return [
        on_card[device].get(key) for key, device in zip(part["key"], part["device"], strict=True)
    ]


def _roof_time_after(part: pd.DataFrame) -> dict[tuple[str, str], float]:
    """Each (kernel, card)'s roof time on its first night after its edit: the new work's."""
    after = part[(part["stamp"] > part["cut"]) & part["percent"].notna()].sort_values("stamp")
    first = after.groupby(["key", "device"], as_index=False).first()
    roof_time = first["percent"].to_numpy(dtype=float) * first["time"].to_numpy(dtype=float)
    pairs = zip(first["key"].astype(str), first["device"].astype(str), strict=True)
    return {pair: float(t) / 100.0 for pair, t in zip(pairs, roof_time, strict=True)}
