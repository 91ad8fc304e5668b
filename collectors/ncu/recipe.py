"""The ncu metric recipe: one launch's metrics -> duration, FLOPs, bytes, each with provenance.

Reports collected with ``--set`` hold almost no raw counts (``dram__bytes.sum`` and the FLOP
counters appear in none of 193 real reports), so every figure is taken from the best source
the launch has, in a fixed order, and says how it was obtained (see ``../shared/ncu-metrics.md``
and ``corpus.md`` section 4):

* raw count -> sum of parts (read + write) -> rate x duration / per-cycle rate x elapsed cycles
  -> sectors x 32 -> proxy metric with a different definition -> absent.

Input values are SI (``normalise`` applies the units once); output is SI.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from collectors.schema import Provenance, ProvenanceKind
from collectors.units import unit_factor

SECTOR_BYTES = 32.0
#: Volta HMMA: one tensor instruction is 512 FLOP (NERSC recipe; wrong for Ampere and later).
VOLTA_TENSOR_FLOP_PER_INST = 512.0
DURATION = "gpu__time_duration.sum"

#: CUDA-core op -> (precision, FLOP per thread instruction). FMA counts twice; packed
#: half (HADD2/HMUL2/HFMA2) and Blackwell FP32x2 count per lane.
FLOP_OPS: dict[str, tuple[str, float]] = {
    "dadd": ("fp64", 1.0), "dmul": ("fp64", 1.0), "dfma": ("fp64", 2.0),
    "fadd": ("fp32", 1.0), "fmul": ("fp32", 1.0), "ffma": ("fp32", 2.0),
    "fadd2": ("fp32", 2.0), "fmul2": ("fp32", 2.0), "ffma2": ("fp32", 4.0),
    "hadd": ("fp16", 2.0), "hmul": ("fp16", 2.0), "hfma": ("fp16", 4.0),
}  # fmt: skip
#: Ops a precision needs before its FLOPs are complete (FP32x2 only exists on Blackwell).
REQUIRED_OPS = {"fp64": ("dadd", "dmul", "dfma"), "fp32": ("fadd", "fmul", "ffma"),
                "fp16": ("hadd", "hmul", "hfma")}  # fmt: skip
WEIGHT_NOTE = {
    "fp16": "HADD2/HMUL2 counted as 2 FLOP, HFMA2 as 4 (ncu <= 2024.1 sections used 1/1/2)",
    "fp32": "FFMA counted as 2 FLOP (FADD2/FMUL2/FFMA2 as 2/2/4)",
    "fp64": "DFMA counted as 2 FLOP",
}
#: Tensor source dtype (as in sm__ops_path_tensor_src_<dtype>) -> precision key.
TENSOR_DTYPES = {
    "fp16": "tensor_fp16", "bf16": "tensor_bf16", "tf32": "tensor_tf32", "fp64": "tensor_fp64",
    "fp8": "tensor_fp8", "int8": "tensor_int8", "fp4": "tensor_fp4", "fp4_fp6": "tensor_fp4",
    "fp4_fp6_fp8": "tensor_fp8",
}  # fmt: skip
_TENSOR_SUM = re.compile(
    r"^sm__ops_path_tensor_src_([a-z0-9_]+?)(?:_dst_[a-z0-9]+?)?(_sparsity_o(?:n|ff))?\.sum$"
)
_TENSOR_PEAK = re.compile(
    r"^sm__ops_path_tensor_(?:op_[a-z0-9]+_)?src_([a-z0-9_]+?)(?:_dst_[a-z0-9]+?)?(_sparsity_o(?:n|ff))?"
    r"\.sum\.peak_sustained$"
)
_OP_METRIC = re.compile(r"^(sm|smsp)__sass_thread_inst_executed_op_([a-z0-9]+)_pred_on\.sum(.*)$")

#: (tier, kind, metrics, note). The first whose metrics are all present wins; ``rate`` entries
#: are multiplied by the duration, ``sectors`` by 32.
_BYTE_SOURCES: dict[str, tuple[tuple[ProvenanceKind, tuple[str, ...], str], ...]] = {
    "dram": (
        (ProvenanceKind.RAW, ("dram__bytes.sum",), ""),
        (ProvenanceKind.SUM, ("dram__bytes_read.sum", "dram__bytes_write.sum"), ""),
        (ProvenanceKind.SUM, ("dram__bytes_op_read.sum", "dram__bytes_op_write.sum"), ""),
        (ProvenanceKind.RATE, ("dram__bytes.sum.per_second",), "rate x duration"),
        (ProvenanceKind.SECTORS, ("dram__sectors_read.sum", "dram__sectors_write.sum"), ""),
        (ProvenanceKind.SECTORS, ("dram__sectors.sum",), ""),
    ),
    "l2": (
        (ProvenanceKind.RAW, ("lts__t_bytes.sum",), ""),
        (ProvenanceKind.RATE, ("lts__t_bytes.sum.per_second",), "rate x duration"),
        (ProvenanceKind.SECTORS, ("lts__t_sectors.sum",), "L2 tag sectors x 32"),
        (ProvenanceKind.PROXY, ("derived__lts__lts2xbar_bytes.sum.per_second",),
         "L2->crossbar return bytes (ncu's L2 roof), rate x duration"),
        (ProvenanceKind.PROXY, ("l1tex__m_xbar2l1tex_read_bytes.sum",), "L2->L1 reads only"),
        (ProvenanceKind.PROXY, ("l1tex__m_xbar2l1tex_read_bytes.sum.per_second",),
         "L2->L1 reads only, rate x duration"),
    ),
    "l1": (
        (ProvenanceKind.RAW, ("l1tex__t_bytes.sum",), ""),
        (ProvenanceKind.RATE, ("l1tex__t_bytes.sum.per_second",), "rate x duration"),
        (ProvenanceKind.SECTORS, ("l1tex__t_sectors.sum",), "L1 tag sectors x 32"),
        (ProvenanceKind.PROXY, ("derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second",),
         "LSU writeback bytes, global/local/shared (ncu's L1 roof), rate x duration"),
        (ProvenanceKind.PROXY, ("derived__l1tex__lsu_writeback_bytes_mem_lg.sum.per_second",),
         "LSU writeback bytes, global/local (ncu's L1 roof), rate x duration"),
    ),
}  # fmt: skip

#: What to collect when a figure is absent: the metric and the ncu options that give it.
HINTS = {
    "duration": "gpu__time_duration.sum (any section set, or --metrics gpu__time_duration.sum)",
    "bytes.dram": "dram__bytes_read.sum,dram__bytes_write.sum (--set full, --set roofline, "
    "or --metrics dram__bytes.sum)",
    "bytes.l2": "lts__t_bytes.sum (--metrics lts__t_bytes.sum; --set full gives lts__t_sectors)",
    "bytes.l1": "l1tex__t_bytes.sum (--metrics l1tex__t_bytes.sum; --set roofline gives a proxy)",
    "flops": "smsp__sass_thread_inst_executed_op_{fadd,fmul,ffma,dadd,dmul,dfma,hadd,hmul,hfma}"
    "_pred_on.sum (--set roofline, or --metrics with these names)",
    "flops.tensor": "sm__ops_path_tensor_src_<dtype>.sum (--metrics; --set full on ncu >= 2025.1)",
}


@lru_cache(maxsize=4096)
def provenance(kind: ProvenanceKind, metrics: tuple[str, ...], note: str = "") -> Provenance:
    """A shared Provenance object (cached: the same few are built for every launch)."""
    return Provenance(kind=kind, metrics=metrics, note=note)


@dataclass(frozen=True, slots=True)
class Figure:
    """One number and how it was obtained."""

    value: float
    provenance: Provenance


@dataclass(slots=True)
class LaunchFigures:
    """What the recipe got out of one launch.

    Attributes:
        duration_s: Kernel time, None when the launch has none (or it is NaN).
        duration: How the duration was obtained.
        flops: FLOPs by precision.
        bytes: Bytes by tier.
        missing: Figure keys that are absent (see ``HINTS``), or partial, with a reason.
        failed: Why the launch is unusable (no duration, or every value NaN), else None.
    """

    duration_s: float | None = None
    duration: Provenance | None = None
    flops: dict[str, Figure] = field(default_factory=dict)
    bytes: dict[str, Figure] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    failed: str | None = None


def normalise(metrics: Iterable[tuple[str, float | None, str]]) -> dict[str, float]:
    """``(name, value, unit)`` triples -> ``{name: SI value}``; None values are left out.

    Raises:
        UnknownUnit: A unit collectors.units cannot scale (the caller names file and row).
    """
    out: dict[str, float] = {}
    for name, value, unit in metrics:
        if value is not None:
            out[name] = value * unit_factor(unit)
    return out


def _get(m: Mapping[str, float], name: str) -> float | None:
    value = m.get(name)
    return None if value is None or math.isnan(value) else value


def duration(m: Mapping[str, float]) -> tuple[float | None, Provenance | None]:
    """Kernel time in seconds: ``gpu__time_duration.sum``, else elapsed cycles / clock."""
    value = _get(m, DURATION)
    if value is not None:
        return value, provenance(ProvenanceKind.RAW, (DURATION,))
    for unit in ("sm", "smsp", "gpc"):
        cycles = _get(m, f"{unit}__cycles_elapsed.avg") or _get(m, f"{unit}__cycles_elapsed.max")
        clock = _get(m, f"{unit}__cycles_elapsed.avg.per_second")
        if cycles is not None and clock:
            names = (f"{unit}__cycles_elapsed.avg", f"{unit}__cycles_elapsed.avg.per_second")
            return cycles / clock, provenance(ProvenanceKind.RATE, names, "elapsed cycles / clock")
    return None, None


def _elapsed_cycles(m: Mapping[str, float], unit: str, seconds: float | None) -> float | None:
    cycles = _get(m, f"{unit}__cycles_elapsed.avg")
    if cycles is not None:
        return cycles
    clock = _get(m, f"{unit}__cycles_elapsed.avg.per_second")
    return clock * seconds if clock is not None and seconds is not None else None


def op_count(
    m: Mapping[str, float], op: str, seconds: float | None
) -> tuple[float, ProvenanceKind, str] | None:
    """Thread-instruction count of one SASS op: raw count, else a rate rebuilt into a count."""
    for unit in ("smsp", "sm"):
        name = f"{unit}__sass_thread_inst_executed_op_{op}_pred_on.sum"
        value = _get(m, name)
        if value is not None:
            return value, ProvenanceKind.RAW, name
    for unit in ("smsp", "sm"):
        name = f"{unit}__sass_thread_inst_executed_op_{op}_pred_on.sum"
        rate, cycles = _get(m, name + ".per_cycle_elapsed"), _elapsed_cycles(m, unit, seconds)
        if rate is not None and cycles is not None:
            return rate * cycles, ProvenanceKind.RATE, name + ".per_cycle_elapsed"
        per_second = _get(m, name + ".per_second")
        if per_second is not None and seconds is not None:
            return per_second * seconds, ProvenanceKind.RATE, name + ".per_second"
    return None


def cuda_core_flops(
    m: Mapping[str, float], seconds: float | None
) -> tuple[dict[str, Figure], list[str]]:
    """FLOPs per CUDA-core precision, weights as ``FLOP_OPS``; partial op sets are flagged."""
    totals: dict[str, float] = {}
    kinds: dict[str, set[ProvenanceKind]] = {}
    used: dict[str, list[str]] = {}
    for op, (precision, weight) in FLOP_OPS.items():
        found = op_count(m, op, seconds)
        if found is None:
            continue
        count, kind, name = found
        totals[precision] = totals.get(precision, 0.0) + weight * count
        kinds.setdefault(precision, set()).add(kind)
        used.setdefault(precision, []).append(name)
    figures, missing = {}, []
    for precision, total in totals.items():
        absent = [
            op
            for op in REQUIRED_OPS[precision]
            if not any(f"_op_{op}_" in n for n in used[precision])
        ]
        kind = (
            ProvenanceKind.RAW if kinds[precision] == {ProvenanceKind.RAW} else ProvenanceKind.RATE
        )
        note = WEIGHT_NOTE[precision]
        if kind is ProvenanceKind.RATE:
            note += "; per-cycle rate x elapsed cycles"
        if absent:
            note += f"; {', '.join(absent)} not collected (lower bound)"
            missing.append(f"flops.{precision}: {', '.join(absent)} not collected")
        figures[precision] = Figure(total, provenance(kind, tuple(used[precision]), note))
    return figures, missing


def tensor_flops(m: Mapping[str, float], cc: str | None) -> tuple[dict[str, Figure], list[str]]:
    """Tensor FLOPs by source precision, one level of the metric hierarchy only."""
    groups: dict[str, dict[str, list[str]]] = {}
    for name in m:
        match = _TENSOR_SUM.match(name)
        if match and _get(m, name) is not None:
            base = name.replace(match.group(2) or "\0", "")
            groups.setdefault(match.group(1), {}).setdefault(base, []).append(name)
    figures: dict[str, Figure] = {}
    missing: list[str] = []
    for dtype, bases in groups.items():
        precision = TENSOR_DTYPES.get(dtype)
        if precision is None:
            continue  # int4/int1 have no precision in the contract
        names = _one_level(dtype, bases)
        value = sum(_get(m, n) or 0.0 for n in names)
        prev = figures.get(precision)
        total = value + (prev.value if prev else 0.0)
        all_names = (prev.provenance.metrics if prev else ()) + tuple(names)
        figures[precision] = Figure(
            total,
            provenance(
                ProvenanceKind.RAW, all_names, "tensor math ops (1 FMA = 2), one hierarchy level"
            ),
        )
    if not figures:
        figures, missing = _volta_tensor(m, cc)
    return figures, missing


def _one_level(dtype: str, bases: Mapping[str, list[str]]) -> list[str]:
    """Tensor metrics to sum for one dtype, never two levels of the hierarchy.

    The dtype roll-up ``src_<dt>.sum`` alone, else each dst roll-up; a sparsity pair stands in
    for a roll-up that is absent.
    """
    rollup = f"sm__ops_path_tensor_src_{dtype}.sum"
    chosen = [rollup] if rollup in bases else sorted(bases)
    names: list[str] = []
    for base in chosen:
        members = bases[base]
        names += [base] if base in members else sorted(members)
    return names


def _volta_tensor(m: Mapping[str, float], cc: str | None) -> tuple[dict[str, Figure], list[str]]:
    for unit in ("sm", "smsp"):
        name = f"{unit}__inst_executed_pipe_tensor.sum"
        inst = _get(m, name)
        if inst is None:
            continue
        if cc is not None and cc.split(".")[0] == "7" and cc != "7.5":
            note = "512 FLOP per HMMA instruction (Volta, NERSC recipe)"
            prov = provenance(ProvenanceKind.PROXY, (name,), note)
            return {"tensor_fp16": Figure(VOLTA_TENSOR_FLOP_PER_INST * inst, prov)}, []
        if inst > 0:
            why = f"{name} counts instructions, not FLOPs, on CC {cc or '?'} (x512 is Volta-only)"
            return {}, [f"flops.tensor: {why}; collect {HINTS['flops.tensor']}"]
    return {}, []


def tier_bytes(
    m: Mapping[str, float], seconds: float | None
) -> tuple[dict[str, Figure], list[str]]:
    """Bytes per memory tier from the first complete source in ``_BYTE_SOURCES``."""
    figures: dict[str, Figure] = {}
    missing: list[str] = []
    for tier, sources in _BYTE_SOURCES.items():
        for kind, names, note in sources:
            values = [_get(m, n) for n in names]
            if any(v is None for v in values):
                continue
            total = sum(v for v in values if v is not None)
            if names[0].endswith(".per_second"):
                if seconds is None:
                    continue
                total *= seconds
            elif kind is ProvenanceKind.SECTORS:
                total *= SECTOR_BYTES
            figures[tier] = Figure(total, provenance(kind, names, note))
            break
        else:
            partial = [n for _, names, _ in sources if len(names) > 1 for n in names if n in m]
            reason = f"only {', '.join(partial)} present (incomplete)" if partial else "absent"
            missing.append(f"bytes.{tier}: {reason}; collect {HINTS['bytes.' + tier]}")
    return figures, missing


def all_nan(m: Mapping[str, float]) -> bool:
    """True when the launch has numbers and every one is NaN (its replay failed)."""
    return bool(m) and all(isinstance(v, float) and math.isnan(v) for v in m.values())


def launch_figures(m: Mapping[str, float], cc: str | None = None) -> LaunchFigures:
    """Everything the recipe can get out of one launch's SI metrics."""
    if all_nan(m):
        return LaunchFigures(failed="every metric is NaN (replay failed)")
    seconds, how = duration(m)
    out = LaunchFigures(duration_s=seconds, duration=how)
    if seconds is None:
        if DURATION in m:
            out.failed = "gpu__time_duration.sum is NaN (replay failed)"
        else:
            out.failed = "no duration"
            out.missing.append(f"duration: absent; collect {HINTS['duration']}")
        return out
    out.flops, flop_missing = cuda_core_flops(m, seconds)
    tensor, tensor_missing = tensor_flops(m, cc)
    out.flops.update(tensor)
    out.bytes, byte_missing = tier_bytes(m, seconds)
    if not any(p in out.flops for p in ("fp64", "fp32", "fp16")):
        flop_missing.append(f"flops: absent; collect {HINTS['flops']}")
    out.missing = flop_missing + tensor_missing + byte_missing
    return out


_RELEVANT = re.compile(
    r"^(?:gpu__time_duration\.sum"
    r"|(?:sm|smsp|gpc|dram|lts|l1tex)__cycles_elapsed\.(?:avg|max)(?:\.per_second)?"
    r"|(?:sm|smsp)__sass_thread_inst_executed_op_[a-z0-9]+_pred_on\.sum(?:\.per_cycle_elapsed|\.per_second|\.peak_sustained)?"
    r"|sm__ops_path_tensor_.*\.sum(?:\.peak_sustained)?"
    r"|(?:sm|smsp)__inst_executed_pipe_tensor\.sum"
    r"|dram__(?:bytes|bytes_read|bytes_write|bytes_op_read|bytes_op_write|sectors|sectors_read|sectors_write)\.sum"
    r"(?:\.per_second|\.peak_sustained)?"
    r"|(?:lts__t|l1tex__t)_(?:bytes|sectors)\.sum(?:\.per_second|\.peak_sustained)?"
    r"|derived__(?:lts__lts2xbar_bytes|l1tex__lsu_writeback_bytes_mem_lgds?)\.sum\.(?:per_second|peak_sustained)"
    r"|l1tex__m_xbar2l1tex_read_bytes\.sum(?:\.per_second)?"
    r"|device__attribute_(?:multiprocessor_count|compute_capability_major|compute_capability_minor)"
    r"|launch__(?:sm_count|grid_size|block_size))$"
)


def is_relevant(name: str) -> bool:
    """Whether the recipe (or the device facts) reads metric ``name``; others are not parsed."""
    return _RELEVANT.match(name) is not None
