"""The roofline maths against hand-computed figures, and its invariants (hypothesis)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules.hardware import builtin_catalog
from rules.roofline import (
    COMPUTE_BOUND,
    MEMORY_BOUND,
    NO_WORK,
    Roof,
    attainable,
    intensity,
    memory_bound,
    place,
    ridge_point,
)

H100 = builtin_catalog().lookup("H100-SXM5").roof()


def test_h100_ridge_points() -> None:
    # 1978.9 TFLOP/s / 3.35 TB/s and 989.4 / 3.35.
    assert ridge_point(H100.peak_flop_per_s["tensor_fp8"], H100.bandwidth_byte_per_s["dram"]) == (
        pytest.approx(590.7, abs=0.5)
    )
    assert ridge_point(H100.peak_flop_per_s["tensor_bf16"], H100.bandwidth_byte_per_s["dram"]) == (
        pytest.approx(295.3, abs=0.5)
    )


def test_70b_decode_step_is_memory_bound_at_20_9_ms() -> None:
    # Batch 1: 2 FLOP per weight (140 GFLOP) over 70 GB of bf16 weights.
    p = place({"tensor_bf16": 140e9}, {"dram": 70e9}, 25e-3, H100)
    assert p.intensity["dram"] == pytest.approx(2.0)
    assert p.regime == MEMORY_BOUND
    assert p.binding == "dram"
    assert p.t_roof_s == pytest.approx(70e9 / 3.35e12)
    assert p.t_roof_s * 1e3 == pytest.approx(20.9, abs=0.05)
    assert p.percent_of_roof == pytest.approx(100 * 20.896 / 25, abs=0.01)


def test_batch_32_decode_is_still_memory_bound() -> None:
    p = place({"tensor_bf16": 32 * 140e9}, {"dram": 70e9}, None, H100)
    assert p.intensity["dram"] == pytest.approx(64.0)
    assert p.regime == MEMORY_BOUND
    assert p.intensity["dram"] < p.ridge  # type: ignore[operator]


def test_fp32_tiled_matmul_1024_cubed() -> None:
    n = 1024
    flops, nbytes = 2 * n**3, 3 * n * n * 4
    assert intensity({"fp32": flops}, {"dram": nbytes})["dram"] == pytest.approx(170.67, abs=0.01)
    p = place({"fp32": flops}, {"dram": nbytes}, 1e-3, H100)
    assert p.regime == COMPUTE_BOUND  # ridge fp32/dram = 66.9 / 3.35 = 20
    assert p.binding == "fp32"


def test_zero_flop_copy_is_memory_bound_with_zero_intensity() -> None:
    p = place({"fp32": 0.0}, {"dram": 2e9}, 1e-3, H100)
    assert p.compute.time_s == 0.0
    assert p.intensity["dram"] == 0.0
    assert p.regime == MEMORY_BOUND
    assert p.percent_of_roof == pytest.approx(100 * (2e9 / 3.35e12) / 1e-3)


def test_nothing_binds_where_the_roof_takes_no_time() -> None:
    """A memset whose bytes went with an untimed launch: 0 FLOPs bind nothing, not fp32."""
    memset = place({"fp32": 0.0}, {}, None, H100)
    assert memset.binding is None and memset.regime is None and memset.percent_of_roof is None
    assert place({"fp32": 0.0}, {"dram": 2e9}, 1e-3, H100).binding == "dram"
    assert place({"fp32": 1e9}, {}, 1e-3, H100).binding == "fp32"


def test_missing_counters_and_tiers_are_named() -> None:
    no_flops = place({}, {"dram": 1e9}, 1e-3, H100)
    assert no_flops.regime is None
    assert any("FLOP counts" in m for m in no_flops.missing)
    roof = Roof("x", "custom", {"fp32": 1e12}, {"dram": 1e11})
    no_l1 = place({"fp32": 1e9}, {"dram": 1e8, "l1": 1e9}, 1e-3, roof)
    assert "no bandwidth for l1 on this roof" in no_l1.missing
    nothing = place({}, {}, None, roof)
    assert nothing.percent_of_roof is None


def test_attainable_is_williams_min() -> None:
    assert attainable(2.0, 989.4e12, 3.35e12) == pytest.approx(6.7e12)
    assert attainable(1000.0, 989.4e12, 3.35e12) == 989.4e12


amounts = st.floats(min_value=1e3, max_value=1e15, allow_nan=False)
times = st.floats(min_value=1e-7, max_value=10.0, allow_nan=False)


@given(flops=amounts, dram=amounts, time_s=times)
def test_percent_at_most_100_exactly_when_time_at_least_roof_time(
    flops: float, dram: float, time_s: float
) -> None:
    p = place({"tensor_bf16": flops}, {"dram": dram}, time_s, H100)
    assert p.t_roof_s is not None and p.percent_of_roof is not None
    assert (p.percent_of_roof <= 100.0) == (time_s >= p.t_roof_s) or math.isclose(
        time_s, p.t_roof_s, rel_tol=1e-12
    )


@given(flops=amounts, dram=amounts, time_s=times, factor=st.floats(min_value=1e-3, max_value=1e3))
def test_scaling_counters_and_time_together_changes_nothing(
    flops: float, dram: float, time_s: float, factor: float
) -> None:
    a = place({"fp32": flops}, {"dram": dram}, time_s, H100)
    b = place({"fp32": flops * factor}, {"dram": dram * factor}, time_s * factor, H100)
    assert b.percent_of_roof == pytest.approx(a.percent_of_roof, rel=1e-9)
    assert b.regime == a.regime
    assert b.intensity["dram"] == pytest.approx(a.intensity["dram"], rel=1e-9)


@given(dram=amounts, l2=amounts, extra=amounts)
def test_more_bytes_never_lowers_memory_time(dram: float, l2: float, extra: float) -> None:
    rates = H100.bandwidth_byte_per_s
    before = memory_bound({"dram": dram, "l2": l2}, rates).time_s
    after_dram = memory_bound({"dram": dram + extra, "l2": l2}, rates).time_s
    after_l2 = memory_bound({"dram": dram, "l2": l2 + extra}, rates).time_s
    assert before is not None and after_dram is not None and after_l2 is not None
    assert after_dram >= before and after_l2 >= before


def test_a_kernel_exactly_on_the_ridge_keeps_its_regime_when_scaled() -> None:
    # Found by hypothesis: fp32 FLOPs and DRAM bytes in the exact ratio of the ridge.
    a = place({"fp32": 6.69e13}, {"dram": 3.35e12}, 1.0, H100)
    b = place({"fp32": 6.69e13 * 672.97}, {"dram": 3.35e12 * 672.97}, 672.97, H100)
    assert a.regime == b.regime == "compute-bound"
    assert a.binding == b.binding == "fp32"


def test_a_kernel_without_flop_counts_is_judged_on_a_lower_bound() -> None:
    from rules.timing import time_fields
    from rules.verdict import BaselineSummary

    no_flops = place({}, {"dram": 1e9}, 1e-3, H100)
    full = place({"fp32": 1e9}, {"dram": 1e9}, 1e-3, H100)
    summary = BaselineSummary(metric="percent_of_roof", n=0)
    assert no_flops.percent_of_roof is not None
    assert time_fields(no_flops, summary, None)["percent_is_lower_bound"]
    assert not time_fields(full, summary, None)["percent_is_lower_bound"]


def test_no_work_counted_is_no_regime() -> None:
    """0 FLOPs and 0 bytes were compute-bound: a kernel with 4 KB of DRAM traffic yesterday
    flipped regime (``bound by None``) when its bytes all hit L2, and lost its counters."""
    nothing = place({"fp32": 0.0}, {"dram": 0.0}, 2e-6, H100)
    assert nothing.regime is None and nothing.binding is None and not nothing.borderline
    assert nothing.missing == (NO_WORK,) and nothing.percent_of_roof is None
    assert place({"fp32": 0.0}, {"dram": 4096.0}, 2e-6, H100).regime == MEMORY_BOUND
