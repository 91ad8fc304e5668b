"""Digest sections about time and the kernel inventory: time regressions, vanished kernels.

Percent of roof can hide a slowdown (a GEMM that fell off the tensor cores sits at the same
percent of a lower roof), so the digest also scans each nightly series of *time* for change
points, and lists kernels that stopped running (a fused kernel replaced by the pieces it used
to fuse). Inputs are frames of ``prepare_history(..., value="time_s")``; everything is
vectorised over the whole history.
"""

from __future__ import annotations

import itertools
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from service.digest.changes import Segments, in_period, series_starts
from service.digest.classify import track_recoveries
from service.digest.model import DigestOptions, TimeMovement, VanishedKernel
from service.digest.seriesrows import last_rows


def time_regressions(
    frame: pd.DataFrame, changes: pd.DataFrame, *, start: datetime, end: datetime
) -> list[TimeMovement]:
    """Rises of nightly time first found in the period (``found.with_found``), slowest-down first.

    ``changes`` are the time series' (``detect_changes(frame, ..., value="time_s")``).
    """
    rows = changes[(changes["relative_change"] > 0) & in_period(changes["found"], start, end)]
    rows = rows.sort_values(["relative_change", "kernel_key"], ascending=[False, True])
    return _movements(frame, rows)


def unresolved_time_regressions(
    frame: pd.DataFrame,
    scanned: tuple[pd.DataFrame, Segments],
    options: DigestOptions,
    judged: set[tuple[str, str]],
) -> list[TimeMovement]:
    """Rises of nightly time (of any age) no later level came back from, oldest first.

    A kernel timed alone (no counters: a Google Benchmark without work) has no percent of
    roof, so only this tracks its regression past the week it started. ``judged`` are the
    (kernel, device) pairs unresolved in percent of roof already: listed once, there.
    """
    changes, segments = scanned
    rises = changes[(changes["relative_change"] > 0) & changes["held_at"].notna()]
    back, _ = track_recoveries(
        rises, segments, frame, options.recovery_tolerance, options.min_segment, worse=1.0
    )
    pairs = pd.Series(list(zip(rises["kernel_key"], rises["device"], strict=True)), dtype=object)
    still = rises[back.isna().to_numpy() & ~pairs.isin(judged).to_numpy()]
    return _movements(frame, still.sort_values(["since", "kernel_key", "device"]))


def _movements(frame: pd.DataFrame, rows: pd.DataFrame) -> list[TimeMovement]:
    """``rows`` of the time scan's changes as time movements (``current_s``: the last night)."""
    current = frame["time_s"].to_numpy()[last_rows(frame)]
    at = rows["row"].to_numpy(dtype=int)
    rows = rows.assign(
        ratio=rows["after"] / rows["before"],
        current_s=current[rows["series"].to_numpy(dtype=int)],
        from_binding=pd.Series(_objects(frame["binding"], at - 1), index=rows.index),
        to_binding=pd.Series(_objects(frame["binding"], at), index=rows.index),
    ).rename(columns={"kernel_key": "kernel", "before": "before_s", "after": "after_s"})
    rows = rows.astype({"from_binding": object, "to_binding": object})
    rows = rows.where(rows.notna(), None)
    return [TimeMovement.model_validate(r) for r in rows.to_dict("records")]


def _objects(values: pd.Series, rows: npt.NDArray[np.int_]) -> npt.NDArray[np.object_]:
    """``values`` at ``rows`` as objects: the whole column as objects is 0.2 GB at 29 M rows."""
    return values.iloc[rows].to_numpy(dtype=object)


def _nights(frame: pd.DataFrame) -> pd.DataFrame:
    """Every nightly run per device, numbered (``rank``) in time order."""
    columns = ["device", "timestamp", "commit"]
    rows = _first_rows_of_nights(frame)
    if rows is not None:
        nights = frame[columns].iloc[rows]
    else:
        nights = frame[columns].drop_duplicates(["device", "timestamp"])
        nights = nights.sort_values(["device", "timestamp"], kind="stable")
    nights = nights.reset_index(drop=True)
    nights["rank"] = nights.groupby("device").cumcount()
    return nights


def _first_rows_of_nights(frame: pd.DataFrame) -> npt.NDArray[np.intp] | None:
    """The first row of each (device, night), by device then time, as ``_nights`` takes them.

    Where each device's rows are together in sorted order (the prepared frame of a compact
    read): a device at a time, not the whole frame's pairs hashed (0.9 GB at 29 M rows).
    None otherwise.
    """
    device = frame["device"]
    stamps = frame["timestamp"]
    if not isinstance(device.dtype, pd.CategoricalDtype) or stamps.hasnans:
        return None
    codes = device.cat.codes.to_numpy()
    sorted_names = device.cat.categories.is_monotonic_increasing
    if not sorted_names or (codes < 0).any() or (codes[1:] < codes[:-1]).any():
        return None
    ticks = np.asarray(stamps.array.asi8)
    bounds = np.searchsorted(codes, np.arange(len(device.cat.categories) + 1))
    found = [
        first + np.unique(ticks[first:end], return_index=True)[1]
        for first, end in itertools.pairwise(bounds)
    ]
    return np.concatenate(found) if found else np.zeros(0, dtype=np.intp)


def _ranked(rows: pd.DataFrame, nights: pd.DataFrame) -> pd.DataFrame:
    return rows.merge(nights[["device", "timestamp", "rank"]], on=["device", "timestamp"])


def vanished_kernels(
    frame: pd.DataFrame, *, start: datetime, end: datetime, min_segment: int
) -> list[VanishedKernel]:
    """Kernels absent from the last ``min_segment`` or more nights, that long by the period's end.

    A kernel that vanished the night others appeared on the same device was replaced by them:
    by one (a rename or a substitute) or by several (a fused kernel split into its pieces).
    """
    if frame.empty:
        return []
    nights = _nights(frame)
    columns = ["kernel_key", "kernel_name", "device", "timestamp", "commit", "time_s"]
    last = _ranked(frame.iloc[last_rows(frame)][columns], nights)
    # As objects: a categorical device (the compact read) would map to a categorical of ranks.
    final = nights.groupby("device", observed=True)["rank"].max()
    last = last.assign(final=last["device"].astype(object).map(final))
    gone = last[last["final"] - last["rank"] >= min_segment].assign(rank=lambda d: d["rank"] + 1)
    gone = gone.merge(
        nights.rename(columns={"timestamp": "since", "commit": "to_commit"}), on=["device", "rank"]
    )
    # Reported in the period its absence had held min_segment nights (``changes.held_at``).
    held = nights[["device", "rank", "timestamp"]].rename(columns={"timestamp": "held_at"})
    gone = gone.merge(held.assign(rank=held["rank"] - (min_segment - 1)), on=["device", "rank"])
    gone = gone[in_period(gone["held_at"], start, end)]
    first = _ranked(frame.iloc[series_starts(frame)][columns], nights)
    new = (
        first[first["rank"] > 0]
        .groupby(["device", "rank"])
        .agg(replaced_by=("kernel_key", list), replacement_time_s=("time_s", "sum"))
    )
    gone = gone.join(new, on=["device", "rank"]).sort_values(["since", "kernel_key"])
    # The kernels that vanished the same night on the device: together, a fusion's parts.
    together = gone.groupby(["device", "rank"], observed=True)["kernel_key"].agg(list)
    gone = gone.join(together.rename("together"), on=["device", "rank"])
    return [_vanished(r) for r in gone.to_dict("records")]


def _vanished(row: dict[Any, Any]) -> VanishedKernel:
    replaced = row["replaced_by"] if isinstance(row["replaced_by"], list) else []
    others = [k for k in row["together"] if k != row["kernel_key"]] if replaced else []
    change = "merged" if others else "split" if len(replaced) > 1 else "replaced"
    return VanishedKernel(
        kernel=row["kernel_key"],
        kernel_name=row["kernel_name"],
        device=row["device"],
        change=change if replaced else "vanished",
        last_seen=row["timestamp"],
        since=row["since"],
        from_commit=row["commit"],
        to_commit=row["to_commit"],
        last_time_s=row["time_s"],
        replaced_by=sorted(replaced),
        replacement_time_s=row["replacement_time_s"] if replaced else None,
        merged_with=sorted(others),
    )
