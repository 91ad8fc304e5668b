"""Like-for-like history: each stored run's percent of the roof its kernel is usually bound by.

A run's stored percent of roof is against the roof the kernel was bound by *in that run*. When
the binding changes (a GEMM falls off the tensor cores: ``tensor_bf16 -> fp32``, 16x slower),
the stored figure is against a far lower roof and the series stays flat (70% of the tensor roof,
then 70% of the fp32 roof). Trends, sparklines, the dashboard and the digest read the figure
of every run against one roof per series instead: the **reference binding**, the binding most of
the series' runs held (the baseline's binding, as ``rules.timing.baseline_binding`` picks it; a
tie goes to the earlier one). It is recomputed from the stored counters with the formulas of
``rules.roofline.percent_of_resource``:

* a precision ``p``: ``100 * (sum_q F_q / P_p) / T`` (all of the FLOPs at ``p``'s peak);
* a tier ``t``: ``100 * (B_t / W_t) / T``,

each on the roof that run placed the kernel on (of a run whose reports partly record clocks,
the one its stored figures fit: ``rules.placedroof``), ``T`` the run's time, and the
work (``F``, ``B``) that of the nearest run of the series bound by the reference: a run off it
did other work there (a fused night moved 1/200 of the dram bytes), and time, the ground
truth, then says which way it went.
Where the work did not change (a GEMM's FLOPs) that is the run's own. A run bound by the
reference keeps its stored figure; one whose roof lacks the reference, or of a series with no
work known there, keeps its own too. Pure functions of frames and roofs; no I/O.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from rules.clocks import ClockedRoof
from rules.placedroof import StoredRows, on_datasheet
from rules.roofline import Roof
from rules.scaling import TIERS

FloatArray = npt.NDArray[np.float64]
ObjectArray = npt.NDArray[np.object_]
IntArray = npt.NDArray[np.int64]

#: The stored figure, against each run's own binding, kept beside the like-for-like one.
OWN_COLUMN = "own_percent_of_roof"
#: The binding every run of the series is measured against.
REFERENCE_COLUMN = "reference_binding"
#: Consecutive runs a binding must hold to count as a change on the chart (the newest runs
#: count at any length: a kernel that fell last night shows it).
CHANGE_HOLD = 2


def reference_binding(bindings: Sequence[Any]) -> str | None:
    """The binding most runs held (a tie goes to the earliest); None when none is known."""
    known = [str(b) for b in bindings if isinstance(b, str) and b]
    if not known:
        return None
    counts = Counter(known)
    top = max(counts.values())
    return next(b for b in known if counts[b] == top)


def series_references(frame: pd.DataFrame) -> pd.Series:
    """Each row's series' reference binding (``reference_binding`` of the series, vectorised)."""
    return _references(frame, _series_codes(frame))


def _series_codes(frame: pd.DataFrame) -> IntArray:
    """Each row's series (device and kernel) as one integer: grouping by it beats the labels."""
    kernels, _ = pd.factorize(frame["kernel_key"])
    devices, names = pd.factorize(frame["device"])
    codes: IntArray = kernels.astype(np.int64) * (len(names) + 1) + devices + 1
    return codes


def _references(frame: pd.DataFrame, series: IntArray) -> pd.Series:
    """``series_references`` given the rows' ``_series_codes``."""
    bindings, names = pd.factorize(frame["binding"])  # -1: unknown
    known = np.flatnonzero(bindings >= 0)
    held = pd.DataFrame({"series": series[known], "binding": bindings[known], "first": known})
    stats = held.groupby(["series", "binding"], sort=False)["first"].agg(["size", "min"])
    best = stats.reset_index().sort_values(["size", "min"], ascending=[False, True])
    best = best.drop_duplicates("series")
    codes = pd.Series(best["binding"].to_numpy(), index=best["series"].to_numpy())
    found = codes.reindex(series).to_numpy(dtype=float)  # NaN: a series with none known
    out = np.full(len(frame), None, dtype=object)
    has = ~np.isnan(found)
    out[has] = np.asarray(names, dtype=object)[found[has].astype(np.int64)]
    return pd.Series(out, index=frame.index)


def _first_held(frame: pd.DataFrame, series: IntArray, hold: int = CHANGE_HOLD) -> pd.Series:
    """Each row's series' first binding to hold ``hold`` consecutive runs (else its most held).

    Rows are oldest first within a series.
    """
    bindings = frame["binding"].to_numpy(dtype=object)
    held: npt.NDArray[np.bool_] = np.asarray(pd.notna(bindings) & (bindings != ""), dtype=bool)
    for lag in range(1, hold):
        same = np.zeros(len(frame), dtype=bool)
        same[:-lag] = (series[:-lag] == series[lag:]) & (bindings[:-lag] == bindings[lag:])
        held &= same
    starts = pd.Series(bindings, dtype=object).where(held)
    first = starts.groupby(series).transform("first")
    most = _references(frame, series)
    return pd.Series(first.fillna(most.reset_index(drop=True)).to_numpy(), index=frame.index)


def _rates(frame: pd.DataFrame, roofs: Mapping[Any, Roof]) -> tuple[FloatArray, ObjectArray]:
    """Per row: the reference's peak or bandwidth on the run's roof (NaN: none).

    And which column of work it divides: ``total_flops`` or ``bytes_<tier>``. Looked up once
    per (run, reference) pair, not per row.
    """
    runs, run_ids = pd.factorize(frame["run_id"])
    refs, references = pd.factorize(frame[REFERENCE_COLUMN])  # -1: none
    width = len(references) + 1
    pairs, inverse = np.unique(runs.astype(np.int64) * width + refs + 1, return_inverse=True)
    looked_up = [
        _rate(roofs.get(run_ids[pair // width]), references[pair % width - 1])
        if pair % width
        else (math.nan, "")
        for pair in pairs
    ]
    rates = np.asarray([rate for rate, _ in looked_up], dtype=float)
    amounts = np.asarray([amount for _, amount in looked_up], dtype=object)
    return rates[inverse], amounts[inverse]


def _kernel_rates(
    frame: pd.DataFrame, roofs: Mapping[Any, Roof], rows: IntArray, rates: FloatArray
) -> FloatArray:
    """``rates`` with each of ``rows`` of a run on a ``ClockedRoof`` read on its kernel's roof.

    Such a run placed the kernels that record no clock on the datasheet roof as it is; its
    stored rows say which only through their figures (``rules.placedroof``), asked of each
    run's rows at once.
    """
    clocked = {run for run, roof in roofs.items() if isinstance(roof, ClockedRoof)}
    picked = rows[frame["run_id"].iloc[rows].isin(clocked).to_numpy(dtype=bool)]
    if not len(picked):
        return rates
    fixed = rates.copy()
    part = frame.iloc[picked]
    stored, run_ids = _stored_rows(part), part["run_id"].to_numpy()
    references = part[REFERENCE_COLUMN].to_numpy(dtype=object)
    for run_id in pd.unique(run_ids):
        roof, at = roofs[run_id], run_ids == run_id
        assert isinstance(roof, ClockedRoof)
        sheet = on_datasheet(roof, stored.subset(at))
        for row, unscaled, reference in zip(picked[at], sheet, references[at], strict=True):
            fixed[row] = _rate(roof.unscaled if unscaled else roof, str(reference))[0]
    return fixed


def _stored_rows(part: pd.DataFrame) -> StoredRows:
    """History rows' work and ``T_roof`` (``percent · time / 100``), as ``on_datasheet`` reads."""

    def known(column: str) -> FloatArray:
        """A column's positive numbers; NaN for the rest (None, outliers, a missing column)."""
        if column not in part:
            return np.full(len(part), math.nan)
        values = pd.to_numeric(part[column], errors="coerce").to_numpy(dtype=float)
        return np.where(np.isfinite(values) & (values > 0), values, math.nan)

    t_roof = known(OWN_COLUMN) * known("time_s") / 100.0
    return StoredRows(
        known("total_flops"),
        {t: known(f"bytes_{t}") for t in TIERS},
        known("peak_flop_time_s"),
        part["binding"].to_numpy(dtype=object),
        t_roof,
    )


def _rate(roof: Roof | None, reference: str) -> tuple[float, str]:
    peak = roof.peak_flop_per_s.get(reference) if roof is not None else None
    if peak is not None:
        return peak, "total_flops"
    bandwidth = roof.bandwidth_byte_per_s.get(reference) if roof is not None else None
    return (bandwidth if bandwidth is not None else math.nan), f"bytes_{reference}"


def _work(frame: pd.DataFrame, amounts: ObjectArray) -> FloatArray:
    """Each row's work at its reference: the ``amounts`` column it names (NaN: none, or 0)."""
    work = np.full(len(frame), math.nan)
    for column in set(amounts):
        if column in frame:
            rows = amounts == column
            work[rows] = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)[rows]
    return np.where(work > 0, work, math.nan)


def _reference_work(frame: pd.DataFrame, series: IntArray, work: FloatArray) -> FloatArray:
    """Per row: the ``work`` of the nearest run of its series bound by the reference (NaN: none).

    The last one before it, else the first after it (rows are oldest first within a series):
    a benchmark whose shape changed in the year a chart spans is read at the shape of then.
    """
    at_reference = (frame["binding"] == frame[REFERENCE_COLUMN]).to_numpy()
    known = pd.Series(np.where(at_reference, work, math.nan))
    before = known.groupby(series).ffill()
    after = known.groupby(series).bfill()
    return before.fillna(after).to_numpy(dtype=float)


def _percents(
    frame: pd.DataFrame, series: IntArray, roofs: Mapping[Any, Roof], rows: IntArray
) -> FloatArray:
    """Percent of each of ``rows``' reference roof, for the reference runs' work (NaN: none).

    The work is the nearest reference-bound run's of the series (``_reference_work``), a
    run's own where there is none: a run's own work there can mislead. After main broke a
    fusion and kept it, the fused nights moved 1/200 of the dram bytes and read 3.3% of the
    dram roof against 80% for the broken ones, a rise where the kernel got 4x slower.
    """
    rates, amounts = _rates(frame, roofs)
    own = _work(frame, amounts)
    nearest = _reference_work(frame, series, own)
    work = np.where(np.isnan(nearest), own, nearest)[rows]
    rates = _kernel_rates(frame, roofs, rows, rates)[rows]
    time_s = pd.to_numeric(frame["time_s"], errors="coerce").to_numpy(dtype=float)[rows]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # stored outliers
        percent = 100.0 * (work / rates) / time_s
    ok = (rates > 0) & (time_s > 0) & np.isfinite(percent)
    return np.where(ok, percent, math.nan)


def like_for_like_history(
    frame: pd.DataFrame, roofs: Mapping[Any, Roof], *, first_held: bool = False
) -> pd.DataFrame:
    """``frame`` with ``percent_of_roof`` against each series' reference binding.

    Args:
        frame: History rows (``rules.frames.HISTORY_COLUMNS``); a series is a (device,
            kernel) pair.
        roofs: The roof each run was placed on, by ``run_id``.
        first_held: The reference is the first binding the series held (``_first_held``),
            not the one most runs held: a digest reads a change against the level before it
            for as long as that level is in its window. By most runs, a GEMM off the tensor
            cores for longer than it was on them read its tensor nights at 1,100% of the fp32
            roof, and a figure reported weekly moved as the window slid.

    Returns:
        A new frame: ``percent_of_roof`` like for like, the stored figure in
        ``own_percent_of_roof`` and the binding it is against in ``reference_binding``.
    """
    out = frame.copy()
    out[OWN_COLUMN] = pd.to_numeric(frame["percent_of_roof"], errors="coerce")
    if out.empty:
        out[REFERENCE_COLUMN] = pd.Series(dtype="object")
        return out
    series = _series_codes(out)
    references = _first_held(out, series) if first_held else _references(out, series)
    out[REFERENCE_COLUMN] = references
    changed = (
        references.notna() & out["binding"].notna() & (out["binding"] != references)
    ).to_numpy() & out[OWN_COLUMN].notna().to_numpy()
    values = out[OWN_COLUMN].to_numpy(dtype=float).copy()
    if changed.any():  # only the runs off the usual binding; the others keep their figure
        other = _percents(out, series, roofs, np.flatnonzero(changed))
        values[changed] = np.where(np.isnan(other), values[changed], other)
    out["percent_of_roof"] = values
    return out


def binding_changes(series: pd.DataFrame, hold: int = CHANGE_HOLD) -> pd.DataFrame:
    """Where one series' binding changed: columns ``since``, ``from_binding``, ``to_binding``.

    ``series`` is one kernel on one device, oldest first (``timestamp``, ``binding``). A
    binding counts once it held ``hold`` consecutive runs (or is the newest), so a borderline
    kernel that flips for one night does not litter the chart.
    """
    known = series[series["binding"].notna()]
    rows = [
        {"since": since, "from_binding": before, "to_binding": after}
        for since, before, after in held_changes(known["binding"], known["timestamp"], hold)
    ]
    return pd.DataFrame(rows, columns=["since", "from_binding", "to_binding"])


def held_changes(
    values: Iterable[Any], stamps: Iterable[Any], hold: int = CHANGE_HOLD
) -> list[tuple[Any, str, str]]:
    """``(since, before, after)`` where ``values`` changed to one held ``hold`` runs in a row.

    Oldest first; the newest value counts at any length. A binding, or the runner a series
    was measured on (the dashboard's trend marks both).
    """
    spans: list[tuple[str, Any, int]] = []  # (value, first timestamp, runs held)
    for value, stamp in zip(map(str, values), stamps, strict=True):
        if spans and spans[-1][0] == value:
            spans[-1] = (value, spans[-1][1], spans[-1][2] + 1)
        else:
            spans.append((value, stamp, 1))
    lasting = [s for i, s in enumerate(spans) if s[2] >= hold or i == len(spans) - 1]
    return [
        (after[1], before[0], after[0])
        for before, after in pairwise(lasting)
        if before[0] != after[0]
    ]
