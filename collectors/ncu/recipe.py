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
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

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


class Figure(NamedTuple):
    """One number and how it was obtained."""

    value: float
    provenance: Provenance


@dataclass(slots=True)
class LaunchFigures:
    """What the recipe got out of one launch.

    Attributes:
        duration_s: Kernel time, None when the launch has none (or it is NaN).
        duration: How the duration was obtained.
        plan: The plan that computed ``values`` (None for a failed launch).
        values: One number per ``plan.specs`` entry, in that order.
        missing: Figure keys that are absent (see ``HINTS``), or partial, with a reason.
        failed: Why the launch is unusable (no duration, or every value NaN), else None.
    """

    duration_s: float | None = None
    duration: Provenance | None = None
    plan: Plan | None = None
    values: tuple[float, ...] = ()
    missing: tuple[str, ...] = ()
    failed: str | None = None

    def figures(self, kind: str) -> dict[str, Figure]:
        """``kind`` = "flops" or "bytes": the figures by precision or tier."""
        if self.plan is None:
            return {}
        pairs = zip(self.plan.specs, self.values, strict=True)
        prefix = kind + "."
        return {
            s.key[len(prefix) :]: Figure(v, s.provenance)
            for s, v in pairs
            if s.key.startswith(prefix)
        }

    @property
    def flops(self) -> dict[str, Figure]:
        """FLOPs by precision."""
        return self.figures("flops")

    @property
    def bytes(self) -> dict[str, Figure]:
        """Bytes by tier."""
        return self.figures("bytes")


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


@dataclass(frozen=True, slots=True)
class Term:
    """One metric's share of a figure.

    The value is ``metric x weight``, times the duration (``scale="s"``) or the elapsed cycles
    of a unit (``scale="sm"``/``"smsp"``) when the metric is a rate.
    """

    name: str
    weight: float = 1.0
    scale: str = ""


@dataclass(frozen=True, slots=True)
class Spec:
    """How one figure (``flops.<precision>`` or ``bytes.<tier>``) is computed."""

    key: str
    provenance: Provenance
    terms: tuple[Term, ...]


@dataclass(frozen=True, slots=True, eq=False)  # identity hash: plans are cached, hashed per launch
class Plan:
    """The recipe's choices for one set of available metrics, made once and reused.

    Every launch of a raw page has the same columns, so the search through the recipe's
    fallbacks runs once per file, not once per launch.
    """

    duration: tuple[str, str | None] | None
    duration_provenance: Provenance | None
    cycles: tuple[tuple[int, str, bool], ...]
    specs: tuple[Spec, ...]
    missing: tuple[str, ...]
    #: Per spec, (metric, weight, scale slot): slot 0 = 1, 1 = seconds, 2/3 = SMSP/SM cycles.
    compiled: tuple[tuple[tuple[str, float, int], ...], ...] = ()

    def evaluate(self, m: Mapping[str, float]) -> LaunchFigures:
        """The figures of one launch whose available metric names are this plan's."""
        if self.duration is None:
            return LaunchFigures(failed="no duration", missing=self.missing)
        numerator, denominator = self.duration
        seconds = m[numerator] if denominator is None else m[numerator] / m[denominator]
        scale = [1.0, seconds, 0.0, 0.0]
        for slot, name, is_clock in self.cycles:
            scale[slot] = m[name] * seconds if is_clock else m[name]
        values = tuple(sum(m[n] * w * scale[c] for n, w, c in terms) for terms in self.compiled)
        return LaunchFigures(seconds, self.duration_provenance, self, values, self.missing)


_SLOTS = {"": 0, "s": 1, "smsp": 2, "sm": 3}


def _duration(names: frozenset[str]) -> tuple[tuple[str, str | None] | None, Provenance | None]:
    """``gpu__time_duration.sum``, else elapsed cycles / clock of the SM, SMSP or GPC unit."""
    if DURATION in names:
        return (DURATION, None), provenance(ProvenanceKind.RAW, (DURATION,))
    for unit in ("sm", "smsp", "gpc"):
        clock = f"{unit}__cycles_elapsed.avg.per_second"
        for cycles in (f"{unit}__cycles_elapsed.avg", f"{unit}__cycles_elapsed.max"):
            if cycles in names and clock in names:
                prov = provenance(ProvenanceKind.RATE, (cycles, clock), "elapsed cycles / clock")
                return (cycles, clock), prov
    return None, None


def _cycles(names: frozenset[str], unit: str) -> tuple[int, str, bool] | None:
    """Elapsed cycles of a unit: ``<unit>__cycles_elapsed.avg``, else its clock x duration."""
    if f"{unit}__cycles_elapsed.avg" in names:
        return _SLOTS[unit], f"{unit}__cycles_elapsed.avg", False
    if f"{unit}__cycles_elapsed.avg.per_second" in names:
        return _SLOTS[unit], f"{unit}__cycles_elapsed.avg.per_second", True
    return None


def _op_term(names: frozenset[str], op: str, weight: float) -> tuple[Term, ProvenanceKind] | None:
    """Thread-instruction count of one SASS op: raw count, else a rate rebuilt into a count."""
    for unit in ("smsp", "sm"):
        name = f"{unit}__sass_thread_inst_executed_op_{op}_pred_on.sum"
        if name in names:
            return Term(name, weight), ProvenanceKind.RAW
    for unit in ("smsp", "sm"):
        name = f"{unit}__sass_thread_inst_executed_op_{op}_pred_on.sum"
        if name + ".per_cycle_elapsed" in names and _cycles(names, unit):
            return Term(name + ".per_cycle_elapsed", weight, unit), ProvenanceKind.RATE
        if name + ".per_second" in names:
            return Term(name + ".per_second", weight, "s"), ProvenanceKind.RATE
    return None


def _cuda_core(names: frozenset[str]) -> tuple[list[Spec], list[str]]:
    """FLOPs per CUDA-core precision, weights as ``FLOP_OPS``; partial op sets are flagged."""
    terms: dict[str, list[Term]] = {}
    kinds: dict[str, set[ProvenanceKind]] = {}
    for op, (precision, weight) in FLOP_OPS.items():
        found = _op_term(names, op, weight)
        if found is not None:
            terms.setdefault(precision, []).append(found[0])
            kinds.setdefault(precision, set()).add(found[1])
    specs, missing = [], []
    for precision, used in terms.items():
        absent = [
            o for o in REQUIRED_OPS[precision] if not any(f"_op_{o}_" in t.name for t in used)
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
        prov = provenance(kind, tuple(t.name for t in used), note)
        specs.append(Spec(f"flops.{precision}", prov, tuple(used)))
    return specs, missing


def _tensor(names: frozenset[str], cc: str | None) -> tuple[list[Spec], list[str]]:
    """Tensor FLOPs by source precision, one level of the metric hierarchy only."""
    groups: dict[str, dict[str, list[str]]] = {}
    for name in names:
        match = _TENSOR_SUM.match(name)
        if match:
            base = name.replace(match.group(2) or "\0", "")
            groups.setdefault(match.group(1), {}).setdefault(base, []).append(name)
    chosen: dict[str, list[str]] = {}
    for dtype, bases in sorted(groups.items()):
        precision = TENSOR_DTYPES.get(dtype)
        if precision is not None:  # int4/int1 have no precision in the contract
            chosen.setdefault(precision, []).extend(_one_level(dtype, bases))
    note = "tensor math ops (1 FMA = 2), one hierarchy level"
    specs = [
        Spec(
            f"flops.{p}",
            provenance(ProvenanceKind.RAW, tuple(used), note),
            tuple(Term(n) for n in used),
        )
        for p, used in chosen.items()
    ]
    return (specs, []) if specs else _volta_tensor(names, cc)


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


def _volta_tensor(names: frozenset[str], cc: str | None) -> tuple[list[Spec], list[str]]:
    for unit in ("sm", "smsp"):
        name = f"{unit}__inst_executed_pipe_tensor.sum"
        if name not in names:
            continue
        if cc is not None and cc.split(".")[0] == "7" and cc != "7.5":
            note = "512 FLOP per HMMA instruction (Volta, NERSC recipe)"
            prov = provenance(ProvenanceKind.PROXY, (name,), note)
            return [Spec("flops.tensor_fp16", prov, (Term(name, VOLTA_TENSOR_FLOP_PER_INST),))], []
        why = f"{name} counts instructions, not FLOPs, on CC {cc or '?'} (x512 is Volta-only)"
        return [], [f"flops.tensor: {why}; collect {HINTS['flops.tensor']}"]
    return [], []


def _bytes(names: frozenset[str]) -> tuple[list[Spec], list[str]]:
    """Bytes per memory tier from the first complete source in ``_BYTE_SOURCES``."""
    specs: list[Spec] = []
    missing: list[str] = []
    for tier, sources in _BYTE_SOURCES.items():
        for kind, used, note in sources:
            if all(n in names for n in used):
                scale = "s" if used[0].endswith(".per_second") else ""
                weight = SECTOR_BYTES if kind is ProvenanceKind.SECTORS else 1.0
                terms = tuple(Term(n, weight, scale) for n in used)
                specs.append(Spec(f"bytes.{tier}", provenance(kind, used, note), terms))
                break
        else:
            partial = [n for _, used, _ in sources if len(used) > 1 for n in used if n in names]
            reason = f"only {', '.join(partial)} present (incomplete)" if partial else "absent"
            missing.append(f"bytes.{tier}: {reason}; collect {HINTS['bytes.' + tier]}")
    return specs, missing


@lru_cache(maxsize=512)
def plan_for(names: frozenset[str], cc: str | None = None) -> Plan:
    """The recipe's choices given the metric names a launch has (NaN ones left out)."""
    duration, how = _duration(names)
    if duration is None:
        return Plan(None, None, (), (), (f"duration: absent; collect {HINTS['duration']}",))
    cycles = tuple(c for c in (_cycles(names, u) for u in ("smsp", "sm")) if c is not None)
    flop_specs, flop_missing = _cuda_core(names)
    tensor_specs, tensor_missing = _tensor(names, cc)
    byte_specs, byte_missing = _bytes(names)
    if not flop_specs:
        flop_missing.append(f"flops: absent; collect {HINTS['flops']}")
    missing = tuple(flop_missing + tensor_missing + byte_missing)
    specs = tuple(flop_specs + tensor_specs + byte_specs)
    compiled = tuple(tuple((t.name, t.weight, _SLOTS[t.scale]) for t in s.terms) for s in specs)
    return Plan(duration, how, cycles, specs, missing, compiled)


def launch_figures(m: Mapping[str, float], cc: str | None = None) -> LaunchFigures:
    """Everything the recipe can get out of one launch's SI metrics."""
    names = frozenset(m)
    if any(map(math.isnan, m.values())):  # a failed counter: plan without it
        names = frozenset(k for k, v in m.items() if not math.isnan(v))
    if m and not names:
        return LaunchFigures(failed="every metric is NaN (replay failed)")
    if DURATION in m and DURATION not in names:
        return LaunchFigures(failed="gpu__time_duration.sum is NaN (replay failed)")
    return plan_for(names, cc).evaluate(m)


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
