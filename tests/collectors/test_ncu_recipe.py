"""The metric recipe on hand-written metric sets: weights, hierarchy levels, fallbacks, peaks."""

from __future__ import annotations

import math

import pytest

from collectors.ncu import recipe
from collectors.ncu.peaks import device_facts

OP = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
BASE = {"gpu__time_duration.sum": 1e-3}


def test_normalise_applies_si_units() -> None:
    m = recipe.normalise(
        [
            ("gpu__time_duration.sum", 250.0, "usecond"),
            ("dram__bytes.sum", 2.0, "Kbyte"),
            ("sm__cycles_elapsed.avg.per_second", 1.5, "Ghz"),
            ("lts__t_bytes.sum", None, "byte"),
        ]
    )
    assert m == pytest.approx(
        {
            "gpu__time_duration.sum": 250e-6,
            "dram__bytes.sum": 2000.0,
            "sm__cycles_elapsed.avg.per_second": 1.5e9,
        }
    )


def test_flop_weights_fma_twice_packed_per_lane() -> None:
    counts = {
        "fadd": 1,
        "fmul": 10,
        "ffma": 100,
        "fadd2": 1000,
        "fmul2": 10_000,
        "ffma2": 100_000,
        "hadd": 3,
        "hmul": 30,
        "hfma": 300,
        "dadd": 7,
        "dmul": 70,
        "dfma": 700,
    }
    m = BASE | {OP.format(op): float(n) for op, n in counts.items()}
    figs = recipe.launch_figures(m)
    assert figs.flops["fp32"].value == 1 + 10 + 2 * 100 + 2 * 1000 + 2 * 10_000 + 4 * 100_000
    assert figs.flops["fp16"].value == 2 * 3 + 2 * 30 + 4 * 300
    assert figs.flops["fp64"].value == 7 + 70 + 2 * 700
    assert figs.flops["fp16"].provenance.kind == "raw"
    assert "HFMA2 as 4" in figs.flops["fp16"].provenance.note


def test_per_cycle_rates_times_elapsed_cycles() -> None:
    m = BASE | {
        "smsp__cycles_elapsed.avg": 2e6,
        OP.format("ffma") + ".per_cycle_elapsed": 3.0,
        OP.format("fadd") + ".per_cycle_elapsed": 1.0,
        OP.format("fmul") + ".per_cycle_elapsed": 0.5,
    }
    figs = recipe.launch_figures(m)
    assert figs.flops["fp32"].value == pytest.approx((1.0 + 0.5 + 2 * 3.0) * 2e6)
    assert figs.flops["fp32"].provenance.kind == "rate"


def test_tensor_rollup_alone_never_its_children() -> None:
    m = BASE | {
        "sm__ops_path_tensor_src_fp16.sum": 100.0,
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum": 60.0,
        "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum": 100.0,
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum": 7.0,
        "sm__ops_path_tensor_src_fp8_sparsity_off.sum": 5.0,
        "sm__ops_path_tensor_src_fp8_sparsity_on.sum": 2.0,
        "sm__ops_path_tensor_src_int1.sum": 1e9,
    }
    flops = recipe.launch_figures(m).flops
    assert flops["tensor_fp16"].value == 100.0
    assert flops["tensor_bf16"].value == 7.0
    assert flops["tensor_fp8"].value == 7.0
    assert "tensor_int1" not in flops and len(flops) == 3


def test_tensor_destination_rollups_are_summed() -> None:
    m = BASE | {
        "sm__ops_path_tensor_src_fp16_dst_fp16.sum": 3.0,
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum": 4.0,
    }
    assert recipe.launch_figures(m).flops["tensor_fp16"].value == 7.0


def test_byte_fallback_order_and_incomplete_pairs() -> None:
    m = BASE | {
        "dram__bytes_read.sum": 5.0,
        "dram__bytes.sum.per_second": 1e9,
        "lts__t_sectors.sum": 4.0,
    }
    figs = recipe.launch_figures(m)
    assert figs.bytes["dram"].value == pytest.approx(1e6)  # read alone is incomplete: the rate wins
    assert figs.bytes["dram"].provenance.kind == "rate"
    assert figs.bytes["l2"].value == 128.0
    only_read = recipe.launch_figures(BASE | {"dram__bytes_read.sum": 5.0})
    assert "dram" not in only_read.bytes
    assert any("only dram__bytes_read.sum present (incomplete)" in t for t in only_read.missing)


def test_duration_from_cycles_and_failed_launches() -> None:
    m = {"sm__cycles_elapsed.avg": 3e6, "sm__cycles_elapsed.avg.per_second": 1.5e9}
    figs = recipe.launch_figures(m)
    assert figs.duration_s == pytest.approx(2e-3)
    assert figs.duration is not None and figs.duration.kind == "rate"
    assert recipe.launch_figures({"gpu__time_duration.sum": math.nan, "x": 1.0}).failed
    assert (
        recipe.launch_figures({"a": math.nan, "b": math.nan}).failed
        == "every metric is NaN (replay failed)"
    )
    assert recipe.launch_figures({"dram__bytes.sum": 1.0}).failed == "no duration"


def test_plans_are_made_once_per_metric_set() -> None:
    m1 = BASE | {"dram__bytes.sum": 1.0}
    m2 = {"gpu__time_duration.sum": 2e-3, "dram__bytes.sum": 5.0}
    assert recipe.launch_figures(m1).plan is recipe.launch_figures(m2).plan


def test_report_peaks_dense_and_at_measured_clock() -> None:
    m = {
        "sm__cycles_elapsed.avg.per_second": 1.98e9,
        "dram__cycles_elapsed.avg.per_second": 2.6e9,
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": 16896.0,
        "sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained": 16896.0,
        "dram__bytes.sum.peak_sustained": 1280.0,
        "sm__ops_path_tensor_src_fp8_sparsity_off.sum.peak_sustained": 1081344.0,
        "sm__ops_path_tensor_src_fp8_sparsity_on.sum.peak_sustained": 2162688.0,
        "sm__ops_path_tensor_src_fp16.sum.peak_sustained": 1081344.0,
        "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.peak_sustained": 540672.0,
        "sm__ops_path_tensor_src_fp64.sum.peak_sustained": 33792.0,
    }
    facts = device_facts(m, {"device__attribute_display_name": "NVIDIA H100 80GB HBM3"})
    assert facts.name == "NVIDIA H100 80GB HBM3"
    assert facts.peak_flop_per_s["fp32"] == pytest.approx(2 * 16896 * 1.98e9)  # 66.9 TFLOP/s
    assert facts.peak_flop_per_s["fp16"] == pytest.approx(4 * 16896 * 1.98e9)
    assert facts.peak_flop_per_s["tensor_fp8"] == pytest.approx(
        1081344 * 1.98e9
    )  # dense, not sparse
    assert facts.peak_flop_per_s["tensor_fp16"] == pytest.approx(540672 * 1.98e9)
    assert facts.peak_flop_per_s["tensor_fp64"] == pytest.approx(33792 * 1.98e9)
    assert facts.bandwidth_byte_per_s["dram"] == pytest.approx(1280 * 2.6e9)
