"""A group's MFU terms: each kernel's FLOPs against one precision's peak on the kernel's own roof.

``rules.groups`` defines MFU (``sum_i min(F_i / P_ref,i, sum_p F_ip / P_p,i) / sum_i T_i``) and
how the precision of ``P_ref`` is chosen. ``P_ref,i`` and ``P_p,i`` are peaks of the roof
kernel ``i`` was placed on: in a run of an ncu report (clocks recorded) beside a trace or a
CSV that records none, the latter's kernels sit on the datasheet roof as it is
(``rules.clocks.kernel_roof``), the former's on the roof scaled to their clocks. Held to the
scaled peak, an fp32 fall of a CSV kernel read 1.33x its MFU against its own bf16 peak, and a
CSV kernel at bf16 named no precision (its own peak is none of the scaled roof's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from rules.roofline import Placement, Roof, precision_of_peak

Floats = npt.NDArray[np.float64]
Indices = npt.NDArray[np.intp]
# How near an effective peak is to a precision's to count as that precision (a kernel with a
# small fp32 epilogue still ran its GEMM on the tensor cores).
PEAK_TOLERANCE = 0.02


@dataclass(frozen=True)
class KernelRoofs:
    """The roofs a run's kernels were placed on, and which one each kernel's is.

    Attributes:
        roofs: The run's roof first, then each other roof a kernel was placed on.
        of_key: Index into ``roofs`` of each kernel placed on another roof than the run's.
    """

    roofs: tuple[Roof, ...]
    of_key: Mapping[str, int]

    def index(self, keys: Iterable[str]) -> Indices:
        """Each key's roof (0: the run's; a key not in the run is read on the run's roof)."""
        return np.fromiter((self.of_key.get(k, 0) for k in keys), dtype=np.intp)

    def peaks(self, precision: str, index: Indices) -> Floats:
        """``precision``'s peak on each row's roof (NaN where that roof has none)."""
        table = [roof.peak_flop_per_s.get(precision, 0.0) for roof in self.roofs]
        return np.array([peak if peak > 0 else np.nan for peak in table], dtype=float)[index]


def kernel_roofs(roof: Roof, placements: Mapping[str, Placement]) -> KernelRoofs:
    """``KernelRoofs`` of a run placed on ``roof``: the roof each placement used."""
    roofs, of_key = [roof], {}
    for key, placement in placements.items():
        if placement.roof is roof:  # the usual case, and every kernel of a run of one report
            continue
        if placement.roof not in roofs:
            roofs.append(placement.roof)
        where = roofs.index(placement.roof)
        if where:
            of_key[key] = where
    return KernelRoofs(tuple(roofs), of_key)


@dataclass(frozen=True)
class Work:
    """Kernels' FLOPs and ``sum_p F_p / P_p``, and the roof each was placed on.

    Attributes:
        rows: ``total_flops`` and ``peak_flop_time_s`` per kernel (per baseline row).
        roof: Each row's index into ``KernelRoofs.roofs``.
    """

    rows: pd.DataFrame
    roof: Indices


def history_work(roofs: KernelRoofs, rows: pd.DataFrame, current_key: Callable[[str], str]) -> Work:
    """``Work`` of baseline rows: each on the roof its kernel is placed on in this run.

    The history keeps no roof per row; a kernel's report (with clocks or without) is the same
    every night, so tonight's roof of the kernel is the one its baseline rows were placed on.
    """
    if not roofs.of_key or rows.empty:
        return Work(rows, np.zeros(len(rows), dtype=np.intp))
    keys = rows["kernel_key"].astype(str)
    unique = keys.unique()
    where = dict(zip(unique, roofs.index(current_key(k) for k in unique), strict=True))
    return Work(rows, keys.map(where).to_numpy(dtype=np.intp))


def _work(rows: pd.DataFrame) -> tuple[Floats, Floats]:
    """Each row's FLOPs and ``sum_p F_p / P_p`` (NaN where unknown)."""
    flops = pd.to_numeric(rows["total_flops"], errors="coerce").to_numpy(dtype=float)
    peak_time = pd.to_numeric(rows["peak_flop_time_s"], errors="coerce").to_numpy(dtype=float)
    return flops, peak_time


def _effective_peaks(rows: pd.DataFrame) -> tuple[Floats, Floats]:
    """Each row's FLOPs and effective peak ``F / sum_p F_p / P_p`` (NaN without placed FLOPs)."""
    flops, peak_time = _work(rows)
    known = (flops > 0) & (peak_time > 0)
    effective = np.divide(flops, peak_time, out=np.full_like(flops, np.nan), where=known)
    return flops, effective


def _positive(roof: Roof) -> dict[str, float]:
    return {name: peak for name, peak in roof.peak_flop_per_s.items() if peak > 0}


def dominant_precision(roofs: KernelRoofs, work: Work) -> str | None:
    """The precision that did most of the FLOPs of ``work`` (a kernel's is its effective peak's).

    Each kernel's effective peak is named among its own roof's peaks; one that is no
    precision's (a mix inside it) counts for none.
    """
    flops, effective = _effective_peaks(work.rows)
    totals: dict[str, float] = {}
    for which, roof in enumerate(roofs.roofs):
        known = np.isfinite(effective) & (work.roof == which)
        values, inverse = np.unique(effective[known], return_inverse=True)
        peaks = _positive(roof)
        for value, done in zip(values, np.bincount(inverse, weights=flops[known]), strict=False):
            name = precision_of_peak(peaks, float(value), PEAK_TOLERANCE)
            if name is not None:
                totals[name] = totals.get(name, 0.0) + float(done)
    return max(totals, key=lambda name: totals[name]) if totals else None


def held_to(roofs: KernelRoofs, work: Work, precision: str | None) -> Floats:
    """Each row's ``min(F / P_ref, sum_p F_p / P_p)``, with ``P_ref`` on the row's own roof.

    Without a precision, each row's work reads at its own peaks.
    """
    flops, peak_time = _work(work.rows)
    if precision is None:
        return np.nan_to_num(peak_time)
    return np.fmin(np.nan_to_num(flops) / roofs.peaks(precision, work.roof), peak_time)


def faster_than(roofs: KernelRoofs, work: Work, precision: str) -> bool:
    """Whether a row ran at a precision faster than ``precision``'s peak on its own roof."""
    _, effective = _effective_peaks(work.rows)
    return bool(np.any(effective > roofs.peaks(precision, work.roof) * (1.0 + PEAK_TOLERANCE)))
