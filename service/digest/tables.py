"""Digest sections computed from the prepared history: flips, targets, devices, sparklines.

Inputs are frames from ``service.digest.build.prepare_history`` (sorted by ``series`` then time,
with ``series`` and ``pos`` columns). All of it is vectorised over the whole history.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from service.digest.model import BelowTarget, DeviceSummary, KernelTarget, Mislabel
from service.digest.seriesrows import last_rows

_BLOCKS = np.array(list("▁▂▃▄▅▆▇█"))


def _period_mask(frame: pd.DataFrame, start: datetime, end: datetime) -> npt.NDArray[np.bool_]:
    stamps = frame["timestamp"]
    return np.asarray((stamps >= pd.Timestamp(start)) & (stamps <= pd.Timestamp(end)))


def sparklines(
    frame: pd.DataFrame,
    series: Sequence[int] | npt.NDArray[np.int64],
    *,
    start: datetime,
    end: datetime,
) -> dict[int, str]:
    """Percent of roof over the period as block characters, per series in ``series``.

    Each line is scaled to its own range (at least a tenth of its level, so that noise on a
    flat line does not fill the height) and centred.
    """
    wanted = _period_mask(frame, start, end) & frame["series"].isin(list(series)).to_numpy()
    rows = frame.loc[wanted, ["series", "percent_of_roof"]]
    if rows.empty:
        return {}
    grouped = rows.groupby("series")["percent_of_roof"]
    low, high = grouped.transform("min").to_numpy(), grouped.transform("max").to_numpy()
    # A span of at least a tenth of the level: noise on a flat line stays near the middle.
    span = np.maximum(high - low, 0.1 * np.abs(high + low) / 2) + 1e-12
    scaled = np.clip((rows["percent_of_roof"].to_numpy() - (high + low) / 2) / span + 0.5, 0, 1)
    chars = pd.Series(_BLOCKS[np.rint(scaled * 7).astype(int)], index=rows.index)
    lines = chars.groupby(rows["series"]).agg("".join)
    return dict(zip(lines.index.astype(int), lines.astype(str), strict=True))


Codes = npt.NDArray[np.integer[Any]]


def _runs(codes: Codes, series: npt.NDArray[np.int64]) -> npt.NDArray[np.int32]:
    """Run number of each row: a run is a stretch of one value within one series.

    In 4 bytes a row, counted in place: at 29 M rows each array of 8 is 0.2 GB.
    """
    new = np.ones(len(codes), dtype=bool)
    new[1:] = (codes[1:] != codes[:-1]) | (series[1:] != series[:-1])
    runs = np.cumsum(new, dtype=np.int32)
    runs -= 1
    return runs


def _smoothed_regime(
    frame: pd.DataFrame, min_segment: int, column: str = "regime"
) -> tuple[Codes, pd.Index]:
    """Codes of ``column`` with runs shorter than ``min_segment`` folded into the run before.

    A run at the very start of a series is kept whatever its length (nothing precedes it), so
    the forward fill below never crosses from one series into the next. Code -1 is no regime.
    """
    codes, names = category_codes(frame[column])
    series = frame["series"].to_numpy()
    run = _runs(codes, series)
    first_run = run == run[np.flatnonzero(frame["pos"].to_numpy() == 0)][series]
    kept = (np.bincount(run) >= min_segment)[run] | first_run
    del first_run, run  # 0.1 GB each at 29 M rows: freed before the row numbers are made
    source = np.arange(len(codes), dtype=np.int32)
    source[~kept] = 0
    np.maximum.accumulate(source, out=source)
    return codes[source], names


def category_codes(values: pd.Series) -> tuple[Codes, pd.Index]:
    """Codes of ``values`` (-1 where absent) and the names they stand for.

    A categorical's own codes: only which rows share a value matters, and factorizing 29 M
    rows again costs seconds.
    """
    if isinstance(values.dtype, pd.CategoricalDtype):
        return values.cat.codes.to_numpy(), values.cat.categories  # int8: no copy
    codes, names = pd.factorize(values)
    return codes, names


def _run_medians(values: pd.Series, run: npt.NDArray[np.int32], wanted: Any) -> Any:
    """Median of ``values`` over each run in ``wanted`` (an array indexed by run number).

    Only the runs around the flips are needed: the rows of a year of nights are not grouped.
    """
    need = np.zeros(int(run[-1]) + 1 if len(run) else 0, dtype=bool)
    need[wanted] = True
    rows = need[run]
    medians = pd.Series(values.to_numpy()[rows]).groupby(run[rows]).median()
    out = np.full(len(need), np.nan)
    out[medians.index.to_numpy()] = medians.to_numpy()
    return out


def regime_flips(
    frame: pd.DataFrame, *, start: datetime, end: datetime, min_segment: int
) -> pd.DataFrame:
    """Regime changes that had held ``min_segment`` nights in the period.

    Returns:
        Columns of ``RegimeFlip`` (``kernel``, ``device``, ``from_regime``, ``to_regime``,
        ``relative_change``, ``since``, ``from_commit``, ``to_commit``, ``kernel_name``).
    """
    flips = flips_of(frame, "regime", start=start, end=end, min_segment=min_segment)
    return flips.drop(columns=["time_ratio"])


def binding_flips(
    frame: pd.DataFrame, *, start: datetime, end: datetime, min_segment: int
) -> pd.DataFrame:
    """Binding precision or tier changes (tensor_bf16 → fp32, dram → l2) that held.

    Returns:
        Columns of ``BindingFlip``; ``relative_change`` is of percent of roof and
        ``time_ratio`` of median time (after over before) around the flip.
    """
    return flips_of(frame, "binding", start=start, end=end, min_segment=min_segment)


def flips_of(
    frame: pd.DataFrame, column: str, *, start: datetime, end: datetime, min_segment: int
) -> pd.DataFrame:
    """Changes of ``column`` (regime or binding) whose ``min_segment``-th night is in the period.

    Returns:
        ``kernel``, ``kernel_name``, ``device``, ``from_<column>``, ``to_<column>``,
        ``relative_change`` (percent of roof), ``time_ratio``, ``since``, ``from_commit``,
        ``to_commit``, sorted by ``since``.
    """
    codes, names = _smoothed_regime(frame, min_segment, column)
    series = frame["series"].to_numpy()
    run = _runs(codes, series)
    flip = np.zeros(len(codes), dtype=bool)  # a row that starts a series is no flip
    flip[1:] = (series[1:] == series[:-1]) & (codes[1:] != codes[:-1])
    flip[1:] &= (codes[1:] >= 0) & (codes[:-1] >= 0)
    rows = np.flatnonzero(flip)
    # Reported in the period it had held min_segment nights (``changes.held_at``): a flip on a
    # period's last night is too young for its digest and began before the next one's.
    rows = rows[_period_mask(frame, start, end)[rows + (min_segment - 1)]]
    run_of = run[rows]
    around = np.r_[run_of, run_of - 1]
    level = _run_medians(frame["percent_of_roof"], run, around)
    times = _run_medians(_numbers(frame["time_s"]), run, around)
    regime = np.asarray(names, dtype=object)
    # Each string column at the flips' rows only: whole, as objects, 0.2 GB at 29 M rows.
    return pd.DataFrame(
        {
            "kernel": frame["kernel_key"].iloc[rows].to_numpy(),
            "kernel_name": frame["kernel_name"].iloc[rows].to_numpy(),
            "device": frame["device"].iloc[rows].to_numpy(),
            f"from_{column}": regime[codes[rows - 1]],
            f"to_{column}": regime[codes[rows]],
            "relative_change": level[run_of] / level[run_of - 1] - 1.0,
            "time_ratio": times[run_of] / times[run_of - 1],
            "since": frame["timestamp"].array[rows],
            "from_commit": frame["commit"].iloc[rows - 1].to_numpy(),
            "to_commit": frame["commit"].iloc[rows].to_numpy(),
        }
    ).sort_values(["since", "kernel", "device"], ignore_index=True)


def _numbers(values: pd.Series) -> pd.Series:
    """``values`` as numbers; when they are already, themselves (a copy is 0.2 GB at 29 M)."""
    if pd.api.types.is_numeric_dtype(values):
        return values
    return pd.to_numeric(values, errors="coerce")


def match_targets(latest: pd.DataFrame, targets: Sequence[KernelTarget]) -> pd.DataFrame:
    """The first target whose pattern matches each row's identity key or display name.

    Returns:
        ``latest``'s index; columns ``group``, ``declared`` (regime) and ``target_percent``
        (NaN where no pattern matches).
    """
    matched = pd.DataFrame(
        index=latest.index, columns=["group", "declared", "target_percent"], dtype=object
    )
    free = np.ones(len(latest), dtype=bool)
    for target in targets:  # a handful of config groups, each matched over all rows at once
        regex = fnmatch.translate(target.pattern)
        hit = free & (
            latest["kernel_key"].astype(str).str.match(regex).to_numpy()
            | latest["kernel_name"].astype(str).str.match(regex).to_numpy()
        )
        matched.loc[hit, ["group", "declared", "target_percent"]] = [
            target.name or target.pattern,
            target.regime,
            target.target_percent,
        ]
        free &= ~hit
    return matched


def _latest(frame: pd.DataFrame, targets: Sequence[KernelTarget]) -> pd.DataFrame:
    last = frame.iloc[last_rows(frame)]
    return last.join(match_targets(last, targets))


def mislabels(frame: pd.DataFrame, targets: Sequence[KernelTarget]) -> list[Mislabel]:
    """Kernels whose last night's regime differs from the declared one."""
    if frame.empty or not targets:
        return []
    latest = _latest(frame, targets)
    declared, measured = latest["declared"], latest["regime"]
    wrong = latest[declared.notna() & measured.notna() & (declared != measured)]
    wrong = wrong.sort_values(["kernel_key", "device"])
    return [
        Mislabel(
            kernel=r.kernel_key,
            device=r.device,
            group=r.group,
            declared=r.declared,
            measured=r.regime,
        )
        for r in wrong.itertuples()
    ]


def below_target(
    frame: pd.DataFrame, targets: Sequence[KernelTarget], nights: int
) -> list[BelowTarget]:
    """Kernels whose median over their last ``nights`` nights is below their target."""
    if frame.empty or not targets:
        return []
    recent = frame[
        frame["pos"] > frame["series"].map(frame.groupby("series")["pos"].max()) - nights
    ]
    level = recent.groupby("series")["percent_of_roof"].median()
    latest = _latest(frame, targets).assign(current=lambda d: d["series"].map(level))
    latest["target_percent"] = pd.to_numeric(latest["target_percent"])
    low = latest[latest["target_percent"].notna() & (latest["current"] < latest["target_percent"])]
    low = low.assign(gap=low["target_percent"] - low["current"]).sort_values(
        ["gap", "kernel_key"], ascending=[False, True]
    )
    return [
        BelowTarget(
            kernel=r.kernel_key,
            device=r.device,
            group=r.group,
            target_percent=r.target_percent,
            current=r.current,
            gap=r.gap,
        )
        for r in low.itertuples()
    ]


def device_summaries(
    frame: pd.DataFrame, parts: Any, flips: pd.DataFrame, *, start: datetime, end: datetime
) -> list[DeviceSummary]:
    """Per-device counts over the period (``parts``: the classified changes)."""
    period = frame[_period_mask(frame, start, end)]
    if period.empty:
        return []
    last = period.groupby("series").tail(1)
    table = pd.DataFrame(
        {
            "kernels": period.groupby("device")["kernel_key"].nunique(),
            "nights": period.groupby("device")["commit"].nunique(),
            "median_percent_of_roof": last.groupby("device")["percent_of_roof"].median(),
            "regressions": parts.regressions.groupby("device").size(),
            "improvements": parts.improvements.groupby("device").size(),
            "regime_flips": flips.groupby("device").size() if len(flips) else pd.Series(dtype=int),
            "unresolved": parts.unresolved.groupby("device").size(),
        }
    ).loc[lambda t: t["kernels"].notna()]
    counts = ["regressions", "improvements", "regime_flips", "unresolved"]
    table[counts] = table[counts].fillna(0).astype(int)
    records = table.sort_index().reset_index(names="device").to_dict("records")
    return [DeviceSummary.model_validate(r) for r in records]


def with_timed_devices(
    devices: Sequence[DeviceSummary], timed: pd.DataFrame, *, start: datetime, end: datetime
) -> list[DeviceSummary]:
    """``devices`` with the kernels and nights of every timed row of the period counted.

    A benchmark measured by its time alone (no work, so no roof) is a measurement too: a
    history of them read "no nightly run in this period" beside its time regressions. A
    device with no placed row gets a summary of its own, without a percent of roof. Each
    keeps its count of kernels on the roof apart (``kernels_on_roof``): a move in percent of
    roof is shared by a third of those, not of every kernel timed beside them.
    """
    period = timed[_period_mask(timed, start, end)]
    by_device = period.groupby("device")
    kernels, nights = by_device["kernel_key"].nunique(), by_device["commit"].nunique()
    known = {d.device: d for d in devices}
    summaries = []
    for device in sorted(set(known) | set(kernels.index)):
        summary = known.get(device) or _unplaced_summary(device)
        counts = {"kernels": kernels.get(device, 0), "nights": nights.get(device, 0)}
        update = {k: max(getattr(summary, k), int(v)) for k, v in counts.items()}
        update["kernels_on_roof"] = summary.kernels if device in known else 0
        summaries.append(summary.model_copy(update=update))
    return summaries


def _unplaced_summary(device: str) -> DeviceSummary:
    return DeviceSummary(
        device=device,
        kernels=0,
        nights=0,
        median_percent_of_roof=None,
        regressions=0,
        improvements=0,
        regime_flips=0,
        unresolved=0,
    )
