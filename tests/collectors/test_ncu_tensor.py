"""Tensor-core work: every tensor type ncu counts, and busy pipes whose work it does not.

Issue 15: a CUTLASS int8 GEMM was placed "memory-bound, 2.2% of roof" with no FLOPs although
its IMMA pipe was busy. Counted integer work is tensor_int8 work; uncounted work leaves the
kernel's FLOPs (and so its regime) unknown, with a note, instead of wrong.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import collectors
from collectors.base import CollectOptions
from collectors.ncu import recipe
from collectors.ncu.aggregate import RunBuilder
from collectors.schema import DeviceInfo, KernelRecord, ProfilerInfo
from rules.hardware import builtin_catalog
from rules.placement import place_kernel

BASE = {
    "gpu__time_duration.sum": 1e-3,
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 10.0,
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": 0.0,
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": 0.0,
    "dram__bytes.sum": 1e6,
}
IMMA_PCT = "sm__inst_executed_pipe_tensor_op_imma.avg.pct_of_peak_sustained_active"
HMMA_PCT = "sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active"
PIPE_PCT = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"


def kernel(*launches: dict[str, float]) -> KernelRecord:
    builder = RunBuilder(Path("synthetic.csv"), "ncu-csv-raw", CollectOptions())
    for index, metrics in enumerate(launches):
        builder.add(str(index), "gemm", recipe.launch_figures({**BASE, **metrics}, "8.0"))
    (record,) = builder.build(DeviceInfo(name="A100-SXM4-80GB"), ProfilerInfo(tool="ncu")).kernels
    return record


@pytest.mark.parametrize(
    ("metrics", "precision", "value"),
    [
        ({"sm__ops_path_tensor_src_int8.sum": 8e9}, "tensor_int8", 8e9),
        ({"sm__ops_path_tensor_src_int8_sparsity_off.sum": 5e9}, "tensor_int8", 5e9),
        # Hopper tables: per-op children only, one level per op, summed over ops.
        (
            {
                "sm__ops_path_tensor_op_imma_src_int8.sum": 2e9,
                "sm__ops_path_tensor_op_imma_src_int8_dst_int32.sum": 2e9,
                "sm__ops_path_tensor_op_igmma_src_int8.sum": 3e9,
            },
            "tensor_int8",
            5e9,
        ),
        ({"sm__ops_path_tensor_op_qgmma_src_fp8_dst_fp32.sum": 4e9}, "tensor_fp8", 4e9),
        ({"sm__ops_path_tensor_src_fp64.sum": 1e9}, "tensor_fp64", 1e9),
        ({"sm__ops_path_tensor_src_fp4_dst_fp32.sum": 6e9}, "tensor_fp4", 6e9),
    ],
)
def test_every_counted_tensor_type_is_its_precisions_work(metrics, precision, value):
    record = kernel({**metrics, PIPE_PCT: 40.0})  # the busy pipe is accounted for
    assert record.flops[precision] == pytest.approx(value)
    assert record.flops["fp32"] == pytest.approx(20.0)
    assert not [m for m in record.missing if "left out" in m]


def test_a_busy_imma_pipe_without_op_counts_leaves_the_flops_unknown():
    record = kernel({IMMA_PCT: 12.96}, {IMMA_PCT: 13.0})
    assert record.flops == {}
    (note,) = [m for m in record.missing if "left out" in m]
    assert "integer (IMMA) work" in note and "= 13.0% on average" in note
    assert "sm__ops_path_tensor_src_<dtype>.sum" in note  # what to collect
    placed = place_kernel(record, builtin_catalog().lookup("A100-SXM4-80GB").roof())
    assert placed.regime is None  # unknown, not "memory-bound"


def test_counted_fp16_work_does_not_account_for_a_busy_imma_pipe():
    record = kernel({"sm__ops_path_tensor_src_fp16.sum": 1e9, IMMA_PCT: 30.0})
    assert record.flops == {}
    assert any("IMMA" in m for m in record.missing)


def test_int4_and_int1_operations_have_no_precision_so_the_flops_are_unknown():
    record = kernel({"sm__ops_path_tensor_src_int4.sum": 1e9})
    assert record.flops == {} and any("int4/int1 work" in m for m in record.missing)


def test_a_trickle_on_the_hmma_pipe_is_no_evidence():
    """F2FP conversions issue on the HMMA pipe: a Half RNG kernel on H800 shows ~0.7%."""
    record = kernel(
        {HMMA_PCT: 0.72, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": 0.72}
    )
    assert record.flops["fp32"] == pytest.approx(20.0)


def test_a_small_gemm_seen_only_over_the_elapsed_time_is_evidence():
    """The corpus int8 GEMM: 2.3% of the pipe's peak over its elapsed time (26% while active)."""
    elapsed = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"
    assert kernel({elapsed: 2.32}).flops == {}


def test_bare_tensor_instruction_counts_are_no_evidence():
    record = kernel({"sm__inst_executed_pipe_tensor_op_hmma.sum": 6.7e10})
    assert record.flops["fp32"] == pytest.approx(20.0)


def test_the_cutlass_int8_gemm_of_the_corpus_is_no_longer_memory_bound(corpus_dir):
    run = collectors.collect(corpus_dir / "ncu-rep/panjd123_cutlass__report-s4.ncu-rep")
    gemm = next(k for k in run.kernels if k.name.startswith("void cutlass::Kernel"))
    reference = next(k for k in run.kernels if k.name.startswith("ReferenceGemm"))
    assert gemm.flops == {} and any("IMMA" in m for m in gemm.missing)
    roof = builtin_catalog().lookup(run.device.name).roof()
    placed = place_kernel(gemm, roof)
    assert placed.regime is None and placed.intensity == {}  # unknown, not 0 FLOP/B
    (note,) = [n for n in run.notes if "tensor-core work" in n]
    assert note.startswith("1 kernel(s) ran tensor-core work this report does not count")
    assert place_kernel(reference, roof).regime == "memory-bound"  # its pipe was idle
