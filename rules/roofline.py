"""The roofline as rules/README.md defines it. Pure functions of plain numbers; no I/O.

For one kernel on one device, with FLOPs ``F_p`` per precision, bytes ``B_t`` per tier,
peaks ``P_p`` and bandwidths ``W_t``::

    T_compute = max_p F_p / P_p        T_memory = max_t B_t / W_t
    T_roof    = max(T_compute, T_memory)
    percent of roof = 100 * T_roof / T
    regime    = memory-bound if T_memory > T_compute else compute-bound
    I_t       = sum_p F_p / B_t        ridge(p, t) = P_p / W_t

Within a factor of ``1 + band`` of the ridge (``|ln(T_compute / T_memory)| <= ln(1 + band)``)
the regime is *borderline*, so noise does not flip it back and forth.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import BeforeValidator

Regime = Literal["memory-bound", "compute-bound"]
MEMORY_BOUND: Regime = "memory-bound"
COMPUTE_BOUND: Regime = "compute-bound"
RoofSource = Literal["datasheet", "report", "measured", "custom"]

#: Default borderline band: the regime is borderline within a factor of 1 + band of the ridge.
DEFAULT_BORDERLINE_BAND = 0.15


@dataclass(frozen=True)
class Roof:
    """The ceilings a kernel is judged against.

    Attributes:
        device: Catalog name of the device (or a user label for custom roofs).
        source: datasheet (catalog), report (ncu peak_sustained x clocks), measured
            (calibration on the runner) or custom (given on the command line).
        peak_flop_per_s: Dense peak per precision, FLOP/s.
        bandwidth_byte_per_s: Bandwidth per memory tier, B/s.
        l2_cache_bytes: The device's L2 cache size, bytes (None: not known): a kernel that
            moves far more than this cannot be running from cache.
        from_config: The peaks and bandwidths (by precision or tier) a ``roofguard.toml``
            ``[devices]`` table set instead of the datasheet: the label says so.
    """

    device: str
    source: RoofSource
    peak_flop_per_s: Mapping[str, float]
    bandwidth_byte_per_s: Mapping[str, float]
    l2_cache_bytes: float | None = None
    from_config: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """Short label: "H100-SXM5 (datasheet)", "H100-SXM5 (datasheet, dram from config)".

        A roof wholly from the configuration (a device the catalog lacks) is "(config)".
        """
        if not self.from_config:
            return f"{self.device} ({self.source})"
        if set(self.peak_flop_per_s) | set(self.bandwidth_byte_per_s) <= set(self.from_config):
            return f"{self.device} (config)"
        few = len(self.from_config) <= 2
        named = " and ".join(self.from_config) if few else f"{len(self.from_config)} figures"
        return f"{self.device} ({self.source}, {named} from config)"


@dataclass(frozen=True)
class Bound:
    """One side of the roofline: the largest per-resource time and what sets it.

    Attributes:
        time_s: ``max`` of the per-resource times, or None when nothing could be computed.
        binding: The precision or tier that sets ``time_s``.
        terms: Seconds per precision or tier (``F_p / P_p`` or ``B_t / W_t``).
        missing: What could not be used, in words.
    """

    time_s: float | None
    binding: str | None
    terms: Mapping[str, float] = field(default_factory=dict)
    missing: tuple[str, ...] = ()


def _bound(amounts: Mapping[str, float], rates: Mapping[str, float], what: str) -> Bound:
    terms: dict[str, float] = {}
    missing: list[str] = []
    for name, amount in amounts.items():
        rate = rates.get(name)
        if rate is None or rate <= 0:
            if amount > 0:
                missing.append(f"no {what} for {name} on this roof")
            continue
        terms[name] = amount / rate
    if not terms:
        # Amounts given but all zero (a copy has zero FLOPs): the bound is zero, not unknown.
        zero = bool(amounts) and all(v == 0 for v in amounts.values()) and not missing
        return Bound(0.0 if zero else None, None, terms, tuple(missing))
    binding = max(terms, key=lambda k: terms[k])
    return Bound(terms[binding], binding, terms, tuple(missing))


def compute_bound(flops: Mapping[str, float], peaks: Mapping[str, float]) -> Bound:
    """``T_compute = max_p F_p / P_p`` and the binding precision."""
    return _bound(flops, peaks, "peak")


def memory_bound(nbytes: Mapping[str, float], bandwidths: Mapping[str, float]) -> Bound:
    """``T_memory = max_t B_t / W_t`` and the binding tier."""
    return _bound(nbytes, bandwidths, "bandwidth")


def percent_of_roof(t_roof_s: float, time_s: float) -> float:
    """``100 * T_roof / T``: 100 means the kernel runs at its speed-of-light time."""
    if time_s <= 0:
        raise ValueError("measured time must be positive")
    return 100.0 * t_roof_s / time_s


#: Relative difference below which T_memory and T_compute count as equal. A kernel exactly on
#: the ridge must not change regime when its counters and time are scaled (float rounding).
RIDGE_TIE = 1e-9


def memory_dominates(t_compute_s: float, t_memory_s: float) -> bool:
    """``T_memory > T_compute`` beyond rounding (ties go to compute-bound)."""
    return t_memory_s > t_compute_s * (1.0 + RIDGE_TIE)


def regime(t_compute_s: float, t_memory_s: float) -> Regime:
    """Memory-bound when ``T_memory > T_compute``, else compute-bound."""
    return MEMORY_BOUND if memory_dominates(t_compute_s, t_memory_s) else COMPUTE_BOUND


def is_borderline(
    t_compute_s: float, t_memory_s: float, band: float = DEFAULT_BORDERLINE_BAND
) -> bool:
    """Whether the kernel sits within a factor of ``1 + band`` of the ridge.

    That is ``|ln(T_compute / T_memory)| <= ln(1 + band)``: with the default band 0.15 an
    intensity from ridge / 1.15 to 1.15 x ridge, 13% below to 15% above, not 15% either side.
    """
    if t_compute_s <= 0 or t_memory_s <= 0:
        return False
    return abs(math.log(t_compute_s / t_memory_s)) <= math.log1p(band)


def intensity(flops: Mapping[str, float], nbytes: Mapping[str, float]) -> dict[str, float]:
    """Arithmetic intensity per tier, ``I_t = sum_p F_p / B_t`` (FLOP/byte); inf for 0 bytes.

    No FLOP figure at all (no counters, or tensor work the report does not count) is an
    unknown intensity, not 0: an empty dict. Zero FLOPs given (a copy) are intensity 0.
    """
    if not flops:
        return {}
    total = sum(flops.values())
    return {t: (total / b if b > 0 else math.inf) for t, b in nbytes.items()}


def _unbounded_if_null(value: object) -> object:
    """JSON has no infinity: a verdict writes a kernel with no bytes' intensity as null."""
    return math.inf if value is None else value


#: An intensity in a model read from JSON: ``inf`` for no bytes, written null, read back inf.
Intensity = Annotated[float, BeforeValidator(_unbounded_if_null)]


def ridge_point(peak_flop_per_s: float, bandwidth_byte_per_s: float) -> float:
    """The intensity at which compute and memory times are equal, ``P / W`` (FLOP/byte)."""
    return peak_flop_per_s / bandwidth_byte_per_s


def attainable(intensity_flop_per_byte: float, peak: float, bandwidth: float) -> float:
    """Williams et al.: attainable FLOP/s = ``min(P, I * W)``."""
    return min(peak, intensity_flop_per_byte * bandwidth)


@dataclass(frozen=True)
class Placement:
    """A kernel placed on a roof. Every field is reproducible from its inputs.

    Attributes:
        roof: The roof used.
        time_s: Measured time ``T`` (None for records without time).
        compute: The compute side.
        memory: The memory side.
        t_roof_s: ``max(T_compute, T_memory)`` over the known sides.
        percent_of_roof: ``100 * T_roof / T``, or None when it cannot be computed.
        regime: memory-bound or compute-bound, None when a side is unknown.
        borderline: Within the band around the ridge.
        binding: The precision or tier that sets ``T_roof``.
        intensity: FLOP/byte per tier.
        ridge: ``P_p / W_t`` for the binding precision over the binding tier.
        missing: What the kernel or the roof lacks, in words.
        total_flops: ``sum_p F_p``.
    """

    roof: Roof
    time_s: float | None
    compute: Bound
    memory: Bound
    t_roof_s: float | None
    percent_of_roof: float | None
    regime: Regime | None
    borderline: bool
    binding: str | None
    intensity: Mapping[str, float]
    ridge: float | None
    missing: tuple[str, ...]
    total_flops: float = 0.0

    @property
    def peak_flop_time_s(self) -> float | None:
        """``sum_p F_p / P_p``: the time every FLOP would take at its precision's peak.

        The numerator of MFU (``MFU = sum_p (F_p / P_p) / T``); None without placed FLOPs.
        """
        return float(sum(self.compute.terms.values())) if self.compute.terms else None

    @property
    def achieved_flop_per_s(self) -> float | None:
        """Total FLOPs over measured time (None when time is unknown)."""
        return self.total_flops / self.time_s if self.time_s else None


def _main_precision(flops: Mapping[str, float], compute: Bound) -> str | None:
    if compute.binding:
        return compute.binding
    return max(flops, key=lambda p: flops[p]) if flops else None


def _ridge(roof: Roof, precision: str | None, tier: str | None) -> float | None:
    peak = roof.peak_flop_per_s.get(precision or "")
    bandwidth = roof.bandwidth_byte_per_s.get(tier or "")
    if not peak or not bandwidth:
        return None
    return ridge_point(peak, bandwidth)


#: Why a kernel whose counters all read zero has no place on the roofline: it lacks no counter.
NO_WORK = "no work counted (0 FLOPs, 0 bytes)"


def _classify(compute: Bound, memory: Bound, band: float) -> tuple[Regime | None, bool]:
    """The regime and whether it is borderline; no regime without both times, or with no work.

    0 FLOPs and 0 bytes (a flag reset whose bytes all hit L2) sit at no point of the roofline:
    calling them compute-bound made a kernel with 4 KB of DRAM traffic last night a flip.
    """
    if compute.time_s is None or memory.time_s is None:
        return None, False
    if compute.time_s == 0 and memory.time_s == 0:
        return None, False
    return regime(compute.time_s, memory.time_s), is_borderline(compute.time_s, memory.time_s, band)


def _missing(
    flops: Mapping[str, float],
    nbytes: Mapping[str, float],
    time_s: float | None,
    compute: Bound,
    memory: Bound,
) -> tuple[str, ...]:
    missing = list(compute.missing) + list(memory.missing)
    if not flops:
        missing.append("FLOP counts (no FLOP counters or declared work)")
    if not nbytes:
        missing.append("byte counts (no memory counters or declared work)")
    if not time_s:
        missing.append("measured time")
    if compute.time_s == 0 and memory.time_s == 0:
        missing.append(NO_WORK)
    return tuple(missing)


def place(
    flops: Mapping[str, float],
    nbytes: Mapping[str, float],
    time_s: float | None,
    roof: Roof,
    *,
    band: float = DEFAULT_BORDERLINE_BAND,
) -> Placement:
    """Place one kernel on ``roof``.

    Handles several precisions and tiers, zero FLOPs (memory-bound, intensity 0), missing
    tiers and missing counters (then ``percent_of_roof`` is None or a partial figure, and
    ``missing`` says what is lacking).
    """
    compute = compute_bound(flops, roof.peak_flop_per_s)
    memory = memory_bound(nbytes, roof.bandwidth_byte_per_s)
    known = [t for t in (compute.time_s, memory.time_s) if t is not None]
    t_roof = max(known) if known else None
    pct = percent_of_roof(t_roof, time_s) if (t_roof is not None and time_s) else None
    if t_roof == 0:
        pct = None  # nothing measurable to compare against
    reg, borderline = _classify(compute, memory, band)
    binding = None
    if t_roof:  # a resource binds only where the roof takes time (not a memset's 0 FLOPs alone)
        memory_wins = memory_dominates(compute.time_s or 0.0, memory.time_s or 0.0)
        binding = memory.binding if memory_wins else (compute.binding or memory.binding)
    return Placement(
        roof=roof,
        time_s=time_s,
        compute=compute,
        memory=memory,
        t_roof_s=t_roof,
        percent_of_roof=pct,
        regime=reg,
        borderline=borderline,
        binding=binding,
        intensity=intensity(flops, nbytes),
        ridge=_ridge(roof, _main_precision(flops, compute), memory.binding or "dram"),
        missing=_missing(flops, nbytes, time_s, compute, memory),
        total_flops=float(sum(flops.values())),
    )


def percent_of_resource(placement: Placement, resource: str | None) -> float | None:
    """Percent of the roof of one precision or tier: the like-for-like figure of a kernel.

    For a precision ``p``: ``100 * (sum_q F_q / P_p) / T``, all of the kernel's FLOPs at that
    precision's peak (a GEMM that fell off the tensor cores, measured against the tensor roof it
    used to reach). For a tier ``t``: ``100 * (B_t / W_t) / T``. None when the roof lacks the
    resource, the kernel has no such work or no time. Equals ``percent_of_roof`` when
    ``resource`` is the kernel's own binding and it has one precision.
    """
    if not resource or not placement.time_s:
        return None
    if resource in placement.roof.peak_flop_per_s:
        peak = placement.roof.peak_flop_per_s[resource]
        seconds = placement.total_flops / peak if peak > 0 else None
    else:
        seconds = placement.memory.terms.get(resource)
    if not seconds:
        return None
    return percent_of_roof(seconds, placement.time_s)


def work_at(placement: Placement, resource: str) -> float | None:
    """The work ``percent_of_resource`` reads at ``resource``: all FLOPs, or its tier's bytes.

    None when the placement has none there (or its roof lacks the resource).
    """
    roof = placement.roof
    if resource in roof.peak_flop_per_s:
        return placement.total_flops or None
    seconds, bandwidth = placement.memory.terms.get(resource), roof.bandwidth_byte_per_s
    return seconds * bandwidth[resource] if seconds and resource in bandwidth else None


def precision_of_peak(
    peaks: Mapping[str, float], peak: float | None, tolerance: float = 0.02
) -> str | None:
    """The precision whose peak is ``peak`` within ``tolerance`` (relative), else None.

    Names the effective peak of a mix of kernels (``sum F / sum F_p / P_p``): when all of them
    ran at one precision it is exactly that precision's peak.
    """
    if not peak or peak <= 0:
        return None
    close = [(abs(p / peak - 1.0), name) for name, p in peaks.items() if p > 0]
    best = min(close, default=None)
    return best[1] if best is not None and best[0] <= tolerance else None
