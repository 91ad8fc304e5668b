"""The digest's device changes: a card that started in the period, against the one before.

Series are per (device, kernel), so a fleet moved to a new card starts fresh series there
and its first week reads as a quiet start. Percent of roof is comparable across cards: for
every card whose first nightly run falls in the period, each kernel's nights on it are
judged against its level on the card that ran last before it (``rules.scale``, the
device-scaling rule's tolerance), and the digest lists the change with the kernels that did
not keep up. Roofs are the catalog's datasheet ones unless the caller passes the roofs the
runs were placed on (``roofs``: the store's ``runs.roof_json``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import pandas as pd
from pydantic import BaseModel

from rules import (
    CROSS_DEVICE_TOLERANCE,
    Keeping,
    Roof,
    Scaling,
    builtin_catalog,
    device_levels,
    keeping,
    scale,
)


class KernelScaling(BaseModel):
    """One kernel across a device change.

    Attributes:
        kernel: Identity key.
        kernel_name: Display name.
        before: Its level of percent of roof on the old card.
        after: Its percent of the roof its old work has on the new card.
        expected_time_ratio: The time ratio the two roofs predict for its work.
        time_ratio: Its time on the new card over its time on the old one.
        keeping: ``kept-up``, ``not-kept-up`` or ``faster``.
    """

    kernel: str
    kernel_name: str
    before: float
    after: float
    expected_time_ratio: float
    time_ratio: float
    keeping: str


class DeviceChange(BaseModel):
    """A card whose nightly runs started in the period, judged against the one before it.

    Attributes:
        from_device: The card that ran last before it.
        to_device: The new card.
        last_night: The old card's last night before the change.
        since: The new card's first night.
        from_commit: The old card's last commit before the change.
        to_commit: The new card's first commit.
        nights: Nights on the new card up to the end of the period.
        kernels: Kernels judged on both cards.
        expected_time_ratio: Their total time ratio as the roofs predict it.
        time_ratio: Their total time ratio as measured.
        not_kept_up: The kernels whose percent of roof fell beyond the tolerance, worst first.
        kept_up: How many kept up.
        faster: How many rose beyond the tolerance (faster than the roofs predict).
    """

    from_device: str
    to_device: str
    last_night: datetime
    since: datetime
    from_commit: str
    to_commit: str
    nights: int
    kernels: int
    expected_time_ratio: float | None = None
    time_ratio: float | None = None
    not_kept_up: list[KernelScaling]
    kept_up: int
    faster: int


def _roof(device: str, rows: pd.DataFrame, roofs: Mapping[str, Roof] | None) -> Roof | None:
    """The roof ``device``'s runs were placed on: given, else its datasheet roof."""
    if roofs is not None and device in roofs:
        return roofs[device]
    if set(rows["roof_source"].dropna().astype(str)) - {"datasheet"}:
        return None  # placed on measured or report roofs the frame does not carry
    spec = builtin_catalog().find(device)
    return spec.roof() if spec is not None else None


def _scalings(old: pd.DataFrame, new: pd.DataFrame, roofs: tuple[Roof, Roof]) -> list[Scaling]:
    levels = device_levels(old)
    found = []
    for key, rows in new.groupby(new["kernel_key"].astype(str), sort=True):
        level = levels.get(str(key))
        times = [float(t) for t in rows["time_s"]]
        scaled = scale(level, roofs[0], roofs[1], times) if level is not None else None
        if scaled is not None:
            found.append(scaled)
    return found


def _kernel(s: Scaling, judged: Keeping) -> KernelScaling:
    return KernelScaling(
        kernel=s.key,
        kernel_name=s.baseline.name,
        before=s.baseline.percent,
        after=s.percent,
        expected_time_ratio=s.expected_time_ratio,
        time_ratio=s.time_ratio,
        keeping=judged.value,
    )


def _change(
    old: pd.DataFrame, new: pd.DataFrame, roofs: tuple[Roof, Roof], tolerance: float
) -> DeviceChange | None:
    scalings = _scalings(old, new, roofs)
    if not scalings:
        return None
    judged = [(s, keeping(s, tolerance=tolerance)) for s in scalings]
    behind = [_kernel(s, k) for s, k in judged if k == Keeping.BEHIND]
    before = sum(s.baseline.time_s for s in scalings)
    last = old.sort_values("timestamp", kind="stable").iloc[-1]
    first = new.sort_values("timestamp", kind="stable").iloc[0]
    return DeviceChange(
        from_device=str(last["device"]),
        to_device=str(first["device"]),
        last_night=last["timestamp"],
        since=first["timestamp"],
        from_commit=str(last["commit"]),
        to_commit=str(first["commit"]),
        nights=int(new["timestamp"].nunique()),
        kernels=len(scalings),
        expected_time_ratio=sum(s.baseline.time_s * s.expected_time_ratio for s in scalings)
        / before,
        time_ratio=sum(s.time_s for s in scalings) / before,
        not_kept_up=sorted(behind, key=lambda k: (k.after / k.before, k.kernel)),
        kept_up=sum(1 for _, k in judged if k == Keeping.KEPT_UP),
        faster=sum(1 for _, k in judged if k == Keeping.AHEAD),
    )


def device_changes(
    frame: pd.DataFrame,
    *,
    start: datetime,
    end: datetime,
    roofs: Mapping[str, Roof] | None = None,
    tolerance: float = CROSS_DEVICE_TOLERANCE,
) -> list[DeviceChange]:
    """Every card whose first nightly run lies in ``[start, end]``, against the card before.

    Args:
        frame: Nightly history (``rules.frames.HISTORY_COLUMNS``) of the period and lookback.
        start: Start of the period.
        end: End of the period.
        roofs: The roof each card's runs were placed on (default: catalog datasheet roofs;
            cards on other roofs are then left out).
        tolerance: The fall of percent of roof beyond which a kernel did not keep up.
    """
    placed = frame[pd.to_numeric(frame["percent_of_roof"], errors="coerce").notna()]
    if placed.empty:
        return []
    placed = placed.assign(timestamp=pd.to_datetime(placed["timestamp"], utc=True))
    placed = placed[placed["timestamp"] <= pd.Timestamp(end)]
    changes = []
    for device, first in placed.groupby("device")["timestamp"].min().sort_values().items():
        earlier = placed[(placed["device"] != device) & (placed["timestamp"] < first)]
        if first < pd.Timestamp(start) or earlier.empty:
            continue
        previous = str(earlier.sort_values("timestamp", kind="stable")["device"].iloc[-1])
        old = earlier[earlier["device"] == previous]
        new = placed[placed["device"] == device]
        pair = (_roof(previous, old, roofs), _roof(str(device), new, roofs))
        if pair[0] is None or pair[1] is None:
            continue
        change = _change(old, new, (pair[0], pair[1]), tolerance)
        if change is not None:
            changes.append(change)
    return changes
