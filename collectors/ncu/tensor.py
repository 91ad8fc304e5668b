"""Tensor-core work: which ncu metrics count it, and which only show the pipe was busy.

Counting (``sm__ops_path_tensor_*``, already FLOPs: 1 FMA = 2) sums one level of the metric
hierarchy only (``collectors/README.md``, Nsight Compute reports): the ``src_<dtype>`` roll-up, else
its ``dst`` roll-ups or sparsity pair, else, where a chip's table has no roll-up for a dtype,
the per-op children (``sm__ops_path_tensor_op_<op>_src_<dtype>``), one level per op.

Activity (instruction counts, pipe cycles, their percent of peak) counts no operations: an
IMMA instruction is 2048 to 8192 ops depending on its shape. The recipe carries one activity
probe per work family so that a kernel whose tensor pipe was busy but whose work the report
does not count is not placed as if it did no tensor math (see ``aggregate``).

Functions return plain rows ``(key, kind, metrics, note, weight)``; the recipe builds its specs
from them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from collectors.ncu.metrics import (
    HINTS,
    TENSOR_ACTIVITY,
    TENSOR_DTYPES,
    TENSOR_OP_FAMILY,
    TENSOR_OP_SUM,
    TENSOR_SUM,
    VOLTA_TENSOR_FLOP_PER_INST,
)
from collectors.ncu.metrics import TENSOR_FAMILY_PRECISIONS as FAMILY_PRECISIONS
from collectors.schema import LEFT_OUT_WORK, KernelRecord, ProvenanceKind

#: (figure key, provenance kind, metrics summed, provenance note, weight of every metric).
Row = tuple[str, ProvenanceKind, tuple[str, ...], str, float]

COUNT_NOTE = "tensor math ops (1 FMA = 2), one hierarchy level"
LEFT_OUT = LEFT_OUT_WORK
#: Mean tensor-pipe use (percent of its peak) from which uncounted work is taken to matter.
#: Conversions alone keep the HMMA pipe at ~0.7% (a Half RNG kernel on H800 in the corpus);
#: the small CUTLASS int8 GEMM of the corpus is at 26% while active, 2.3% over the elapsed
#: time: 2% keeps the first out and the second in whichever of the two a report carries.
BUSY_PERCENT = 2.0
_UNCOUNTABLE = re.compile(r"^sm__ops_path_tensor_(?:op_[a-z0-9]+_)?src_int[41](?:_|\.)")
_OP = re.compile(r"_(?:op|subpipe)_([a-z0-9]+)")


def _groups(names: frozenset[str]) -> dict[str, dict[str, list[str]]]:
    """Dtype -> {metric without its sparsity suffix: the names sharing it}; roll-ups win."""
    rollups: dict[str, dict[str, list[str]]] = {}
    children: dict[str, dict[str, list[str]]] = {}
    for name in names:
        if (match := TENSOR_SUM.match(name)) is not None:
            dtype, sparsity, groups = match.group(1), match.group(2), rollups
        elif (match := TENSOR_OP_SUM.match(name)) is not None:
            dtype, sparsity, groups = match.group(2), match.group(3), children
        else:
            continue
        base = name.replace(sparsity, "") if sparsity else name
        groups.setdefault(dtype, {}).setdefault(base, []).append(name)
    return {**children, **rollups}


def _one_level(dtype: str, bases: Mapping[str, list[str]]) -> list[str]:
    """Metrics to sum for one dtype, never two levels of the hierarchy.

    The roll-up ``src_<dt>.sum`` alone, else each dst roll-up; a sparsity pair stands in for
    a roll-up that is absent. Per-op children: each op's ``src_<dt>`` likewise.
    """
    by_owner: dict[str, list[str]] = {}
    for base in bases:
        owner = re.sub(r"_src_.*", "", base)
        by_owner.setdefault(owner, []).append(base)
    chosen: list[str] = []
    for owner, owned in sorted(by_owner.items()):
        rollup = f"{owner}_src_{dtype}.sum"
        chosen += [rollup] if rollup in owned else sorted(owned)
    names: list[str] = []
    for base in chosen:
        members = bases[base]
        names += [base] if base in members else sorted(members)
    return names


def tensor_rows(names: frozenset[str], cc: str | None) -> tuple[list[Row], list[str]]:
    """Tensor FLOPs by source precision, and what is missing about them."""
    chosen: dict[str, list[str]] = {}
    for dtype, bases in sorted(_groups(names).items()):
        precision = TENSOR_DTYPES.get(dtype)
        if precision is not None:  # int4/int1 have no precision: see activity_rows
            chosen.setdefault(precision, []).extend(_one_level(dtype, bases))
    rows = [
        (f"flops.{p}", ProvenanceKind.RAW, tuple(used), COUNT_NOTE, 1.0)
        for p, used in chosen.items()
    ]
    return (rows, []) if rows else _volta(names, cc)


def _volta(names: frozenset[str], cc: str | None) -> tuple[list[Row], list[str]]:
    for unit in ("sm", "smsp"):
        name = f"{unit}__inst_executed_pipe_tensor.sum"
        if name not in names:
            continue
        if cc is not None and cc.split(".")[0] == "7" and cc != "7.5":
            note = "512 FLOP per HMMA instruction (Volta, NERSC recipe)"
            row = ("flops.tensor_fp16", ProvenanceKind.PROXY, (name,), note, 1.0)
            return [(*row[:4], VOLTA_TENSOR_FLOP_PER_INST)], []
        why = f"{name} counts instructions, not FLOPs, on CC {cc or '?'} (x512 is Volta-only)"
        return [], [f"flops.tensor: {why}; collect {HINTS['flops.tensor']}"]
    return [], []


def family(name: str) -> str | None:
    """The tensor work family a metric shows activity of, None for other metrics.

    int (IMMA and its wgmma/tcgen05 forms), fp64 (DMMA), float (HMMA, HGMMA, QGMMA, ...),
    any (the whole pipe, or GMMA of any type), uncountable (int4/int1 operation counts).
    """
    if TENSOR_ACTIVITY.match(name):
        # Only a percent of peak is evidence (see BUSY_PERCENT): bare counts are not, since
        # conversions issue on the HMMA pipe (a Half RNG kernel on H800 in the corpus) and a
        # plain SGEMM (Gardenia-Tian gemm_v1<float>, CC 8.0) shows 6.7e10 tensor instructions.
        if "pct_of_peak" not in name:
            return None
        op = _OP.search(name)
        return "any" if op is None else TENSOR_OP_FAMILY.get(op.group(1), "float")
    return "uncountable" if _UNCOUNTABLE.match(name) else None


def activity_rows(names: frozenset[str]) -> list[Row]:
    """One activity probe per work family, keyed ``busy.<family>``.

    A count is preferred to a percent of peak, and "active" to "elapsed".
    """
    best: dict[str, tuple[tuple[bool, bool, str], str]] = {}
    for name in names:
        found = family(name)
        if found is None:
            continue
        rank = ("pct_of_peak" in name, "elapsed" in name, name)
        if found not in best or rank < best[found][0]:
            best[found] = (rank, name)
    return [
        (f"busy.{fam}", ProvenanceKind.PROXY, (name,), "tensor pipe activity", 1.0)
        for fam, (_, name) in sorted(best.items())
    ]


def _busy(value: float, metric: str, launches: int) -> bool:
    if "pct_of_peak" in metric:
        return value / max(launches, 1) >= BUSY_PERCENT
    return value > 0


def uncounted(
    flops: Mapping[str, float], busy: Mapping[str, tuple[float, str]], launches: int
) -> list[str]:
    """What the tensor pipe did that ``flops`` does not count, one line per work family.

    Args:
        flops: The kernel's FLOPs by precision (a precision present counts its family).
        busy: ``family -> (activity summed over launches, the metric)``.
        launches: Launches summed (a percent of peak is judged on its mean).
    """
    left = {
        fam: f"{metric} = {value / max(launches, 1):.1f}% on average"
        if "pct_of_peak" in metric
        else f"{metric} = {value:.4g}"
        for fam, (value, metric) in busy.items()
        if _busy(value, metric, launches) and not any(p in flops for p in FAMILY_PRECISIONS[fam])
    }
    if len(left) > 1:
        left.pop("any", None)  # the whole pipe's activity says nothing the families do not
    lines = []
    for fam, metric in sorted(left.items()):
        what = _WORK[fam]
        lines.append(
            f"{LEFT_OUT} the tensor pipe ran {what} ({metric}) but the report counts "
            "none of its operations, so the kernel's FLOPs and regime are unknown; collect "
            f"{HINTS['flops.tensor']}"
        )
    return lines


def uncounted_note(kernels: Sequence[KernelRecord]) -> list[str]:
    """A run-level note naming the kernels whose tensor work is uncounted.

    The verdict shows run notes, not each kernel's ``missing``; CUTLASS names run to
    kilobytes, so each is cut to its first 60 characters.
    """
    names = [
        k.key if len(k.key) <= 60 else k.key[:59] + "…"
        for k in kernels
        if any(m.startswith(LEFT_OUT) for m in k.missing)
    ]
    if not names:
        return []
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return [
        f"{len(names)} kernel(s) ran tensor-core work this report does not count ({shown}): "
        f"their FLOPs and regime are unknown; collect {HINTS['flops.tensor']}"
    ]


_WORK = {
    "int": "integer (IMMA) work",
    "fp64": "FP64 (DMMA) work",
    "float": "floating-point (HMMA/GMMA) work",
    "any": "tensor-core work",
    "uncountable": "int4/int1 work, which roofguard has no precision for",
}
