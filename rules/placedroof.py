"""Which of a ``ClockedRoof``'s two roofs stored rows were placed on, read from their figures.

A run whose reports partly record clocks places the kernels that record one on the roof
scaled to them, the others on the datasheet roof as it is (``rules.clocks``). A stored row
does not say which, but its figures were computed on its roof: its ``T_roof`` (``percent ·
time / 100``) and its effective peak (``flops / peak_flop_time_s``, a peak of that roof for
one precision). The roof that reproduces them nearest is its own; where both do alike (the
clocks moved no resource its figures show), the scaled one. One rule, over arrays of rows:
the re-read of a corrected datasheet figure asks it of a chunk of rows
(``rules.rereadhistory``), like for like of each run's rows, and the levels of another card
of all of them at once (``placed_roofs``; ``placed_roof`` is one row). By the ``T_roof``
alone a re-read read a clockless kernel memory-bound on both roofs as on the scaled one, and
its percent of the corrected roof 1/0.80 too high where its compute then bound
(tests/rules/test_placed_roof.py). Pure numpy; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from rules.batchplace import Floats
from rules.clocks import ClockedRoof
from rules.roofline import Roof
from rules.scaling import Work

#: ``rules.roofline.precision_of_peak``'s tolerance: an effective peak this near (relative)
#: a precision's is that precision's (``Work.precision``).
SAME_PEAK = 0.02


@dataclass(frozen=True)
class StoredRows:
    """Stored rows' work and ``T_roof``, one element a row (NaN and None: unknown).

    Attributes:
        flops: Total FLOPs.
        nbytes: Bytes per memory tier.
        peak_flop_time_s: ``sum_p F_p / P_p`` on the roof each row was placed on.
        binding: The binding precision or tier each had there.
        t_roof_s: The ``T_roof`` each had there.
    """

    flops: Floats
    nbytes: Mapping[str, Floats]
    peak_flop_time_s: Floats
    binding: npt.NDArray[np.object_]
    t_roof_s: Floats

    @classmethod
    def of(cls, rows: Sequence[tuple[Work, float | None]]) -> StoredRows:
        """``rows``: each one's work as ``rules.scaling`` holds it and its ``T_roof``.

        A tier one row's work lacks is NaN there, which ``misfit`` reads as that row's
        work alone: an unknown tier adds no term to its roof time.
        """

        def column(values: Sequence[float | None]) -> Floats:
            return np.array([math.nan if v is None else v for v in values], dtype=float)

        works = [work for work, _ in rows]
        tiers = dict.fromkeys(tier for work in works for tier in work.nbytes)
        return cls(
            column([work.flops for work in works]),
            {tier: column([work.nbytes.get(tier) for work in works]) for tier in tiers},
            column([work.peak_flop_time_s for work in works]),
            np.array([work.binding for work in works], dtype=object),
            column([t_roof_s for _, t_roof_s in rows]),
        )

    def subset(self, rows: npt.NDArray[Any]) -> StoredRows:
        """The rows ``rows`` (a mask, or positions) of these."""
        return StoredRows(
            self.flops[rows],
            {t: a[rows] for t, a in self.nbytes.items()},
            self.peak_flop_time_s[rows],
            self.binding[rows],
            self.t_roof_s[rows],
        )


def placed_roof(roof: Roof, work: Work, t_roof_s: float | None) -> Roof:
    """The roof stored ``work`` was placed on: of a ``ClockedRoof``'s two, the one it fits."""
    return placed_roofs(roof, [(work, t_roof_s)])[0]


def placed_roofs(roof: Roof, rows: Sequence[tuple[Work, float | None]]) -> list[Roof]:
    """Each of stored ``rows``' (work, ``T_roof``) roof of ``roof``, decided for all at once.

    ``placed_roof`` of each, in one ``on_datasheet`` over them all: a card's levels read
    one by one spent 0.45 ms each on the arrays of a single row.
    """
    if not isinstance(roof, ClockedRoof):
        return [roof] * len(rows)
    if not rows:
        return []
    sheet = on_datasheet(roof, StoredRows.of(rows))
    return [roof.unscaled if bool(unscaled) else roof for unscaled in sheet]


def on_datasheet(roof: ClockedRoof, rows: StoredRows) -> npt.NDArray[np.bool_]:
    """Rows placed on ``roof.unscaled``: their figures fit it strictly nearer than ``roof``."""
    found: npt.NDArray[np.bool_] = misfit(rows, roof.unscaled) < misfit(rows, roof)
    return found


def misfit(rows: StoredRows, roof: Roof) -> Floats:
    """How far each row's stored figures are from the ones ``roof`` gives its work (0: exactly).

    ``|log(T_roof on roof / stored T_roof)|`` plus ``|log(P / effective peak)|`` for the
    nearest peak ``P`` of ``roof``; a term whose figures are unknown counts 0.
    """
    peaks = {p: v for p, v in roof.peak_flop_per_s.items() if v > 0}
    known = (rows.flops > 0) & (rows.peak_flop_time_s > 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        effective = np.where(known, rows.flops / rows.peak_flop_time_s, math.nan)
        distance = np.abs(np.log(np.array(list(peaks.values()))[:, None] / effective))
        estimate = _roof_time(rows, roof, _precision_peaks(rows, peaks, effective, distance))
        both = (estimate > 0) & (rows.t_roof_s > 0)
        total = np.where(both, np.abs(np.log(estimate / rows.t_roof_s)), 0.0)
    if not peaks:
        return total
    fits = np.isfinite(effective) & (effective > 0)
    out: Floats = total + np.where(fits, distance.min(axis=0), 0.0)
    return out


def _roof_time(rows: StoredRows, roof: Roof, peak: Floats) -> Floats:
    """Each row's ``T_roof`` on ``roof``, all its FLOPs at its precision's ``peak`` (NaN: none)."""
    terms = [np.where((rows.flops > 0) & (peak > 0), rows.flops / peak, math.nan)]
    for tier, amount in rows.nbytes.items():
        bandwidth = roof.bandwidth_byte_per_s.get(tier, 0.0)
        if bandwidth > 0:
            terms.append(np.where(amount > 0, amount / bandwidth, math.nan))
    out: Floats = np.fmax.reduce(np.vstack(terms), axis=0)
    return out


def _precision_peaks(
    rows: StoredRows, peaks: Mapping[str, float], effective: Floats, distance: Floats
) -> Floats:
    """Each row's precision's peak on a roof of ``peaks`` (``Work.precision``; NaN: none).

    Its binding where that is a precision; else the precision whose peak is its effective
    one (within ``SAME_PEAK``; the first by name of equals), else the nearest to it in log
    (``distance``: ``|log(P / effective)|`` per peak in ``peaks``' order, per row).
    """
    bindings = rows.binding.tolist()
    found = np.array([peaks.get(b, math.nan) if isinstance(b, str) else math.nan for b in bindings])
    free = np.isnan(found) & ~np.isnan(effective)
    if not peaks or not free.any():
        return found
    named = np.array([peaks[p] for p in sorted(peaks)])
    near = np.abs(named[:, None] / effective - 1.0)  # under ``misfit``'s errstate
    exact = named[np.argmin(near, axis=0)]
    nearest = np.array(list(peaks.values()))[np.argmin(distance, axis=0)]
    chosen = np.where(near.min(axis=0) <= SAME_PEAK, exact, nearest)
    found[free] = chosen[free]
    return found
