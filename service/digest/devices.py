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
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from pydantic import BaseModel

from rules import (
    CALIBRATING_NIGHTS,
    CROSS_DEVICE_TOLERANCE,
    Keeping,
    Roof,
    Scaling,
    builtin_catalog,
    device_levels,
    keeping,
    level_roofs,
    scale,
)
from service.config import BaselineOptions

#: The card before's last nights a change is judged against: the gate's window, as a PR
#: check's cross-device baseline reads that card (``BaselineOptions.gate_window``).
GATE_WINDOW: int = BaselineOptions().gate_window


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
    if {str(s) for s in pd.unique(rows["roof_source"].dropna())} - {"datasheet"}:
        return None  # placed on measured or report roofs the frame does not carry
    spec = builtin_catalog().find(device)
    return spec.roof() if spec is not None else None


def _scalings(old: pd.DataFrame, new: pd.DataFrame, roofs: tuple[Roof, Roof]) -> list[Scaling]:
    """Each kernel of ``new`` with a level on the old card, scaled; by key, rows in order.

    Its first ``CALIBRATING_NIGHTS`` nights on the new card judge the change, as a check's
    device-scaling and ``rules.newcard`` do: a kernel that kept up and fell on its third
    night there is the new card's regression (the digest's scan reports it), not the swap's.
    """
    levels = device_levels(old)
    own = level_roofs(levels.values(), roofs[0])
    keys, group = np.unique(new["kernel_key"].astype(str).to_numpy(), return_inverse=True)
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(len(keys) + 1))
    times = new["time_s"].to_numpy(dtype=float)[order]
    found = []
    for i, key in enumerate(keys):
        level = levels.get(str(key))
        part = [float(t) for t in times[bounds[i] : bounds[i + 1]][:CALIBRATING_NIGHTS]]
        scaled = None
        if level is not None:
            scaled = scale(level, roofs[0], roofs[1], part, placed=own[level.key])
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


def nanoseconds(stamps: pd.Series) -> npt.NDArray[np.int64]:
    """``stamps`` as UTC nanoseconds."""
    return pd.DatetimeIndex(pd.to_datetime(stamps, utc=True)).as_unit("ns").asi8


def _edge(frame: pd.DataFrame, last: bool) -> pd.Series:
    """The frame's first row by time (or its last), as a stable sort by timestamp puts them."""
    stamps = nanoseconds(frame["timestamp"])
    rows = np.flatnonzero(stamps == (stamps.max() if last else stamps.min()))
    return frame.iloc[int(rows[-1] if last else rows[0])]


def judge_card(
    old: pd.DataFrame,
    new: pd.DataFrame,
    *,
    roofs: Mapping[str, Roof] | None = None,
    tolerance: float = CROSS_DEVICE_TOLERANCE,
) -> DeviceChange | None:
    """A new card's rows (``new``) against the rows of the card before (``old``).

    Both are placed rows (``rules.crossdevice.LEVEL_COLUMNS`` and ``roof_source``): the old
    card's before the new card's first night, the new card's up to the period's end.
    """
    pair = (_edge(old, last=True), _edge(new, last=False))
    found = (_roof(str(pair[0]["device"]), old, roofs), _roof(str(pair[1]["device"]), new, roofs))
    if found[0] is None or found[1] is None:
        return None
    scalings = _scalings(old, new, (found[0], found[1]))
    if not scalings:
        return None
    judged = [(s, keeping(s, tolerance=tolerance)) for s in scalings]
    behind = [_kernel(s, k) for s, k in judged if k == Keeping.BEHIND]
    before = sum(s.baseline.time_s for s in scalings)
    last, first = pair
    return DeviceChange(
        from_device=str(last["device"]),
        to_device=str(first["device"]),
        last_night=pd.to_datetime(last["timestamp"], utc=True),
        since=pd.to_datetime(first["timestamp"], utc=True),
        from_commit=str(last["commit"]),
        to_commit=str(first["commit"]),
        nights=int(pd.to_datetime(new["timestamp"], utc=True).nunique()),
        kernels=len(scalings),
        expected_time_ratio=sum(s.baseline.time_s * s.expected_time_ratio for s in scalings)
        / before,
        time_ratio=sum(s.time_s for s in scalings) / before,
        not_kept_up=sorted(behind, key=lambda k: (k.after / k.before, k.kernel)),
        kept_up=sum(1 for _, k in judged if k == Keeping.KEPT_UP),
        faster=sum(1 for _, k in judged if k == Keeping.AHEAD),
    )


#: Nights away from a card, on others, after which its next night is a device change again.
RETURN_GAP = pd.Timedelta(days=7).value


def _device_codes(devices: pd.Series) -> npt.NDArray[np.integer[Any]]:
    """Each row's device as a number (-1: none), numbered in sorted order (a group-by's).

    A categorical's own codes when its categories are sorted: 1 byte a row, not 8 (0.2 GB at
    29 M rows); a number left unused by an absent card changes no order.
    """
    if (
        isinstance(devices.dtype, pd.CategoricalDtype)
        and devices.cat.categories.is_monotonic_increasing
    ):
        return np.asarray(devices.cat.codes.to_numpy())
    codes, _ = pd.factorize(devices, sort=True, use_na_sentinel=True)
    return np.asarray(codes, dtype=np.intp)


def _firsts(
    stamps: npt.NDArray[np.int64],
    devices: npt.NDArray[np.integer[Any]],
    placed: npt.NDArray[np.bool_],
) -> pd.Series:
    """Each card's first placed night (by card number), in order of the nights.

    A card a pass: a group-by of every placed row took 1.3 GB at 29 M rows.
    """
    firsts = {}
    for device in range(int(devices.max(initial=-1)) + 1):
        mine = placed & (devices == device)
        if mine.any():
            firsts[device] = stamps[mine].min()
    return pd.Series(firsts, dtype=np.int64).sort_values()


def _returns(
    stamps: npt.NDArray[np.int64],
    devices: npt.NDArray[np.integer[Any]],
    placed: npt.NDArray[np.bool_],
    start: int,
) -> dict[int, int]:
    """Each card's first night from ``start`` after ``RETURN_GAP`` or more on other cards.

    A runner moved to another card and back: the card's first night is weeks old, and its
    return was no device change. A pool alternating cards night by night returns to none.
    """
    found = {}
    for device in range(int(devices.max(initial=-1)) + 1):
        own = np.unique(stamps[placed & (devices == device)])
        away = np.flatnonzero((np.diff(own) >= RETURN_GAP) & (own[1:] >= start))
        for before, back in zip(own[away], own[away + 1], strict=True):
            if (placed & (devices != device) & (stamps > before) & (stamps < back)).any():
                found[device] = int(back)
                break
    return found


def trusted_of(frame: pd.DataFrame) -> npt.NDArray[np.bool_]:
    """Each row's runner passed its health preflight: the ``trusted`` column, else every row."""
    if "trusted" not in frame.columns:
        return np.ones(len(frame), dtype=bool)
    return ~frame["trusted"].eq(False).to_numpy(dtype=bool)


def card_starts(
    frame: pd.DataFrame,
    *,
    start: datetime,
    end: datetime,
    window: int = GATE_WINDOW,
    trusted: npt.NDArray[np.bool_] | None = None,
) -> list[tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]]:
    """Each card whose first placed night, or return (``_returns``), lies in ``[start, end]``.

    As positions in ``frame``: the card before's placed rows of its last ``window`` nights
    before the new card's first (the runs a PR check's cross-device baseline reads, the gate's
    window), and the new card's placed rows from then up to ``end``; cards in order of the
    night they started. Only ``trusted`` rows count (default ``trusted_of``): as in a check,
    a runner whose preflight failed neither starts a card nor gives one a level.
    """
    percent = pd.to_numeric(frame["percent_of_roof"], errors="coerce").to_numpy(dtype=float)
    stamps = nanoseconds(frame["timestamp"])
    devices = _device_codes(frame["device"])
    placed = ~np.isnan(percent) & (stamps <= pd.Timestamp(end).value) & (devices >= 0)
    placed &= trusted_of(frame) if trusted is None else trusted
    begun = _firsts(stamps, devices, placed)
    back = _returns(stamps, devices, placed, pd.Timestamp(start).value)
    found = []
    for device, first in pd.concat([begun, pd.Series(back, dtype=np.int64)]).sort_values().items():
        earlier = placed & (devices != device) & (stamps < first)
        if first < pd.Timestamp(start).value or not earlier.any():
            continue
        last = stamps.max(where=earlier, initial=np.iinfo(np.int64).min)
        latest = np.flatnonzero(earlier & (stamps == last))[-1]
        before = _last_nights(
            np.flatnonzero(earlier & (devices == devices[latest])), stamps, window
        )
        found.append((before, np.flatnonzero(placed & (devices == device) & (stamps >= first))))
    return found


def _last_nights(
    rows: npt.NDArray[np.intp], stamps: npt.NDArray[np.int64], window: int
) -> npt.NDArray[np.intp]:
    """``rows`` of their last ``window`` distinct timestamps (a nightly run's rows share one)."""
    nights = np.unique(stamps[rows])
    if nights.size <= window:
        return rows
    return np.asarray(rows[stamps[rows] >= nights[-window]], dtype=np.intp)


def device_changes(
    frame: pd.DataFrame,
    *,
    start: datetime,
    end: datetime,
    roofs: Mapping[str, Roof] | None = None,
    tolerance: float = CROSS_DEVICE_TOLERANCE,
    window: int = GATE_WINDOW,
) -> list[DeviceChange]:
    """Every card whose first nightly run lies in ``[start, end]``, against the card before.

    Args:
        frame: Nightly history (``rules.frames.HISTORY_COLUMNS``) of the period and lookback.
        start: Start of the period.
        end: End of the period.
        roofs: The roof each card's runs were placed on (default: catalog datasheet roofs;
            cards on other roofs are then left out).
        tolerance: The fall of percent of roof beyond which a kernel did not keep up.
        window: The card before's last nights its levels are read from (``card_starts``).
    """
    changes = []
    for old, new in card_starts(frame, start=start, end=end, window=window):
        change = judge_card(frame.iloc[old], frame.iloc[new], roofs=roofs, tolerance=tolerance)
        if change is not None:
            changes.append(change)
    return changes
