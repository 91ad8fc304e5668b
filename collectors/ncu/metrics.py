"""The ncu metric catalogue the recipe reads: FLOP weights, tensor dtypes, byte sources, hints.

Names and weights are documented in collectors/README.md ("How every figure is obtained");
the byte sources are in the order of preference found to work on every real report of the
corpus.
"""

from __future__ import annotations

import re
from functools import lru_cache

from collectors.schema import ProvenanceKind

SECTOR_BYTES = 32.0
#: Volta HMMA: one tensor instruction is 512 FLOP (NERSC recipe; wrong for Ampere and later).
VOLTA_TENSOR_FLOP_PER_INST = 512.0
DURATION = "gpu__time_duration.sum"

#: CUDA-core op -> (precision, FLOP per thread instruction). FMA counts twice; packed
#: half (HADD2/HMUL2/HFMA2) and Blackwell FP32x2 count per lane.
FLOP_OPS: dict[str, tuple[str, float]] = {
    "dadd": ("fp64", 1.0),
    "dmul": ("fp64", 1.0),
    "dfma": ("fp64", 2.0),
    "fadd": ("fp32", 1.0),
    "fmul": ("fp32", 1.0),
    "ffma": ("fp32", 2.0),
    "fadd2": ("fp32", 2.0),
    "fmul2": ("fp32", 2.0),
    "ffma2": ("fp32", 4.0),
    "hadd": ("fp16", 2.0),
    "hmul": ("fp16", 2.0),
    "hfma": ("fp16", 4.0),
}
#: Ops a precision needs before its FLOPs are complete (FP32x2 only exists on Blackwell).
REQUIRED_OPS = {
    "fp64": ("dadd", "dmul", "dfma"),
    "fp32": ("fadd", "fmul", "ffma"),
    "fp16": ("hadd", "hmul", "hfma"),
}
WEIGHT_NOTE = {
    "fp16": "HADD2/HMUL2 counted as 2 FLOP, HFMA2 as 4 (ncu <= 2024.1 sections used 1/1/2)",
    "fp32": "FFMA counted as 2 FLOP (FADD2/FMUL2/FFMA2 as 2/2/4)",
    "fp64": "DFMA counted as 2 FLOP",
}
#: Tensor source dtype (as in sm__ops_path_tensor_src_<dtype>) -> precision key.
TENSOR_DTYPES = {
    "fp16": "tensor_fp16",
    "bf16": "tensor_bf16",
    "tf32": "tensor_tf32",
    "fp64": "tensor_fp64",
    "fp8": "tensor_fp8",
    "int8": "tensor_int8",
    "fp4": "tensor_fp4",
    "fp4_fp6": "tensor_fp4",
    "fp4_fp6_fp8": "tensor_fp8",
}
TENSOR_SUM = re.compile(
    r"^sm__ops_path_tensor_src_([a-z0-9_]+?)(?:_dst_[a-z0-9]+?)?(_sparsity_o(?:n|ff))?\.sum$"
)
#: Per-op children (Hopper+: ``sm__ops_path_tensor_op_imma_src_int8...``), used where a
#: dtype has no ``src_`` roll-up: group 1 the op, then as ``TENSOR_SUM``.
TENSOR_OP_SUM = re.compile(
    r"^sm__ops_path_tensor_op_([a-z0-9]+)_src_([a-z0-9_]+?)(?:_dst_[a-z0-9]+?)?"
    r"(_sparsity_o(?:n|ff))?\.sum$"
)
#: Tensor-pipe activity (instruction counts, pipe cycles, their percent of peak): shows work
#: on the tensor cores even where the report counts none of its operations.
TENSOR_ACTIVITY = re.compile(
    r"^(?:sm|smsp)__(?:inst_executed_pipe_tensor[a-z0-9_]*|pipe_tensor[a-z0-9_]*_cycles_active)"
    r"\.(?:sum|avg)(?:\.pct_of_peak_sustained_(?:active|elapsed))?$"
)
#: Tensor pipe op (as in ``_op_<op>`` / ``_subpipe_<op>``) -> the family of work it does;
#: any other op (hmma, hgmma, qgmma, utchmma, utcqmma, utcomma ...) is floating point.
TENSOR_OP_FAMILY = {"imma": "int", "igmma": "int", "utcimma": "int", "dmma": "fp64", "gmma": "any"}
#: Work family -> the precisions whose counts account for it.
TENSOR_FAMILY_PRECISIONS = {
    "int": ("tensor_int8",),
    "fp64": ("tensor_fp64",),
    "float": ("tensor_fp16", "tensor_bf16", "tensor_tf32", "tensor_fp8", "tensor_fp4"),
    "any": tuple(sorted(set(TENSOR_DTYPES.values()))),
    "uncountable": (),  # int4/int1: no precision in the contract, never counted
}

#: (tier, kind, metrics, note). The first whose metrics are all present wins; ``rate`` entries
#: are multiplied by the duration, ``sectors`` by 32.
BYTE_SOURCES: dict[str, tuple[tuple[ProvenanceKind, tuple[str, ...], str], ...]] = {
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
        (
            ProvenanceKind.PROXY,
            ("derived__lts__lts2xbar_bytes.sum.per_second",),
            "L2->crossbar return bytes (ncu's L2 roof), rate x duration",
        ),
        (ProvenanceKind.PROXY, ("l1tex__m_xbar2l1tex_read_bytes.sum",), "L2->L1 reads only"),
        (
            ProvenanceKind.PROXY,
            ("l1tex__m_xbar2l1tex_read_bytes.sum.per_second",),
            "L2->L1 reads only, rate x duration",
        ),
    ),
    "l1": (
        (ProvenanceKind.RAW, ("l1tex__t_bytes.sum",), ""),
        (ProvenanceKind.RATE, ("l1tex__t_bytes.sum.per_second",), "rate x duration"),
        (ProvenanceKind.SECTORS, ("l1tex__t_sectors.sum",), "L1 tag sectors x 32"),
        (
            ProvenanceKind.PROXY,
            ("derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second",),
            "LSU writeback bytes, global/local/shared (ncu's L1 roof), rate x duration",
        ),
        (
            ProvenanceKind.PROXY,
            ("derived__l1tex__lsu_writeback_bytes_mem_lg.sum.per_second",),
            "LSU writeback bytes, global/local (ncu's L1 roof), rate x duration",
        ),
    ),
}

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


_RELEVANT = re.compile(
    r"^(?:gpu__time_duration\.sum"
    r"|(?:sm|smsp|gpc|dram|lts|l1tex)__cycles_elapsed\.(?:avg|max)(?:\.per_second)?"
    r"|(?:sm|smsp)__sass_thread_inst_executed_op_[a-z0-9]+_pred_on\.sum(?:\.per_cycle_elapsed|\.per_second|\.peak_sustained)?"
    r"|sm__ops_path_tensor_.*\.sum(?:\.peak_sustained)?"
    r"|(?:sm|smsp)__inst_executed_pipe_tensor[a-z0-9_]*\.(?:sum|avg)"
    r"(?:\.pct_of_peak_sustained_(?:active|elapsed))?"
    r"|(?:sm|smsp)__pipe_tensor[a-z0-9_]*_cycles_active\.(?:sum|avg)"
    r"(?:\.pct_of_peak_sustained_(?:active|elapsed))?"
    r"|dram__(?:bytes|bytes_read|bytes_write|bytes_op_read|bytes_op_write|sectors|sectors_read|sectors_write)\.sum"
    r"(?:\.per_second|\.peak_sustained)?"
    r"|(?:lts__t|l1tex__t)_(?:bytes|sectors)\.sum(?:\.per_second|\.peak_sustained)?"
    r"|derived__(?:lts__lts2xbar_bytes|l1tex__lsu_writeback_bytes_mem_lgds?)\.sum\.(?:per_second|peak_sustained)"
    r"|l1tex__m_xbar2l1tex_read_bytes\.sum(?:\.per_second)?"
    r"|device__attribute_(?:multiprocessor_count|compute_capability_major|compute_capability_minor)"
    r"|launch__(?:sm_count|grid_size|block_size|registers_per_thread"
    r"|shared_mem_per_block_(?:static|dynamic))"
    r"|sm__maximum_warps_per_active_cycle_pct|sm__warps_active\.avg\.pct_of_peak_sustained_active"
    r"|(?:l1tex|lts)__t_sector_hit_rate\.pct"
    r"|smsp__average_warps?(?:_latency)?_issue_stalled_[a-z_]+\.ratio"
    r"|smsp__pcsamp_warps_issue_stalled_[a-z_]+)$"
)


def is_relevant(name: str) -> bool:
    """Whether the recipe, the device facts or the profile reads ``name``; others are not parsed."""
    return _RELEVANT.match(name) is not None


#: The dimension (``collectors.units.unit_dimension``) a metric's unit must have, so a value is
#: never scaled as another kind of quantity (a duration in cycles read as seconds). Metrics not
#: listed are not checked: ``derived__`` rates carry ``byte`` or no unit in real reports, and
#: per-cycle rates and peaks carry ``cycle`` or ``inst`` (the corpus).
_DIMENSIONS = (
    (re.compile(r"^gpu__time_duration\.sum$"), "time"),
    (re.compile(r"^[a-z0-9]+__cycles_elapsed\.(?:avg|max)\.per_second$"), "frequency"),
    (re.compile(r"^(?!derived__).*bytes[a-z_]*\.sum\.per_second$"), "byte rate"),
    (re.compile(r"^(?!derived__).*bytes[a-z_]*\.sum$"), "byte"),
    (re.compile(r"(?:sectors[a-z_]*|_pred_on)\.sum\.per_second$"), "rate"),
    (
        re.compile(
            r"^[a-z0-9]+__(?:cycles_elapsed\.(?:avg|max)|[a-z0-9_]*sectors[a-z_]*\.sum"
            r"|sass_thread_inst_executed_op_[a-z0-9]+_pred_on\.sum"
            r"|inst_executed_pipe_tensor[a-z0-9_]*\.sum)$"
        ),
        "count",
    ),
)


@lru_cache(maxsize=4096)
def dimension_of(name: str) -> str | None:
    """The dimension ``name``'s unit must have (``collectors.units.unit_dimension``); None: any."""
    for pattern, dimension in _DIMENSIONS:
        if pattern.search(name):
            return dimension
    return None
