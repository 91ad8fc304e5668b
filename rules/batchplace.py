"""Roofline placement of a chunk of kernels at once: the figures a measurement row stores.

``rules.roofline.place`` places one kernel from dictionaries; a huge run read as columns
(``collectors.batch``, ``service.store.batch_ingest``) and the history rows a corrected
datasheet figure re-reads (``rules.rereadhistory``) are placed here a chunk at a time, on
arrays, with the same arithmetic in the same order element by element (IEEE division,
multiplication and comparison are exact per element, so each figure is the very float
``place`` gives; the one logarithm, of the borderline test, is taken by ``math.log`` as
``place`` takes it). Tests hold the rows of both paths equal on the corpus and on generated
runs. Pure numpy; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from rules.roofline import RIDGE_TIE, Roof

Floats = np.ndarray[Any, np.dtype[Any]]


@dataclass(frozen=True)
class _Side:
    """``rules.roofline.Bound`` for a chunk: time (NaN: unknown), binding name per kernel."""

    time: Floats
    binding: np.ndarray[Any, np.dtype[np.object_]]
    terms: list[Floats]


def _side(amounts: Mapping[str, Floats], rates: Mapping[str, float], size: int) -> _Side:
    """``T = max_x A_x / R_x`` and its binding, per kernel (``rules.roofline._bound``)."""
    names = [n for n in amounts if (rates.get(n) or 0.0) > 0]
    terms = [amounts[n] / rates[n] for n in names]
    binding = np.full(size, None, dtype=object)
    if not terms:
        zero = bool(amounts) and np.all([a == 0 for a in amounts.values()], axis=0)
        time = np.where(zero, 0.0, np.nan) if bool(amounts) else np.full(size, np.nan)
        return _Side(np.asarray(time, dtype=np.float64), binding, terms)
    stacked = np.vstack(terms)
    best = np.argmax(stacked, axis=0)  # the first of equal times, as max() over a dict
    binding[:] = np.array(names, dtype=object)[best]
    return _Side(stacked[best, np.arange(size)], binding, terms)


@dataclass(frozen=True)
class Placed:
    """What a measurement row keeps of each kernel's placement (NaN and None: unknown)."""

    percent_of_roof: Floats
    regime: list[str | None]
    binding: list[str | None]
    borderline: list[bool]
    intensity: dict[str, Floats]
    t_roof_s: Floats
    peak_flop_time_s: Floats
    total_flops: Floats | None


def place_chunk(
    flops: Mapping[str, Floats],
    nbytes: Mapping[str, Floats],
    seconds: Floats,
    roof: Roof,
    *,
    band: float,
) -> Placed:
    """Place kernels of one shape on ``roof`` (``rules.roofline.place``, element by element)."""
    size = len(seconds)
    compute = _side(flops, roof.peak_flop_per_s, size)
    memory = _side(nbytes, roof.bandwidth_byte_per_s, size)
    tc, tm = compute.time, memory.time
    t_roof = np.fmax(tc, tm)  # the known side where one is unknown, NaN where both are
    with np.errstate(divide="ignore", invalid="ignore"):
        pct = 100.0 * t_roof / seconds
    pct = np.where((seconds > 0) & (t_roof != 0), pct, np.nan)
    known = ~np.isnan(tc) & ~np.isnan(tm) & (t_roof != 0)  # no work: no regime, as ``place``
    memory_wins = np.nan_to_num(tm) > np.nan_to_num(tc) * (1.0 + RIDGE_TIE)
    regime = np.where(memory_wins, "memory-bound", "compute-bound")
    regimes = [r if k else None for r, k in zip(regime.tolist(), known.tolist(), strict=True)]
    bindings = _binding(compute, memory, memory_wins)
    return Placed(
        percent_of_roof=pct,
        regime=regimes,
        binding=bindings,
        borderline=_borderline(tc, tm, known, band),
        intensity=_intensity(flops, nbytes),
        t_roof_s=t_roof,
        peak_flop_time_s=_sum(compute.terms) if compute.terms else np.full(size, np.nan),
        total_flops=_sum(list(flops.values())) if flops else None,
    )


def _sum(arrays: list[Floats]) -> Floats:
    """``sum()`` of the arrays in order, from 0 (as ``sum`` over a dict's values)."""
    total: Floats = np.zeros_like(arrays[0])
    for array in arrays:
        total = total + array
    return total


def _binding(compute: _Side, memory: _Side, memory_wins: Any) -> list[str | None]:
    """``memory.binding if memory_wins else (compute.binding or memory.binding)``."""
    chosen = np.where(memory_wins, memory.binding, compute.binding)
    fallback = np.where(np.equal(chosen, np.array(None, dtype=object)), memory.binding, chosen)
    out: list[str | None] = list(fallback)
    return out


def _borderline(tc: Floats, tm: Floats, known: Any, band: float) -> list[bool]:
    """``rules.roofline.is_borderline`` per kernel, by ``math.log`` as it is taken there."""
    limit = math.log1p(band)
    both = known & (np.nan_to_num(tc) > 0) & (np.nan_to_num(tm) > 0)
    flags = [False] * len(tc)
    for i in map(int, np.flatnonzero(both)):
        flags[i] = abs(math.log(float(tc[i]) / float(tm[i]))) <= limit
    return flags


def _intensity(flops: Mapping[str, Floats], nbytes: Mapping[str, Floats]) -> dict[str, Floats]:
    """``I_t = sum_p F_p / B_t`` per tier (inf for no bytes); none without FLOP figures."""
    if not flops:
        return {}
    total = _sum(list(flops.values()))
    out: dict[str, Floats] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for tier, amount in nbytes.items():
            out[tier] = np.where(amount > 0, total / amount, np.inf)
    return out
