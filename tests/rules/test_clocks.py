"""A datasheet roof at the report's clocks (issue 30, part 4): ncu locks to base clocks."""

from __future__ import annotations

import pytest

from collectors.schema import DeviceInfo, SourceRef
from rules import ClockedRoof, at_report_clocks, builtin_catalog, place_kernel
from tests.factories import make_kernel, make_run

H100 = builtin_catalog().lookup("H100-SXM5")
BASE_HZ = 1.53e9  # the clock ncu's --clock-control base held the SMs at
BF16_AT_BASE = 989.4e12 * BASE_HZ / 1.98e9
GEMM_FLOP = 2 * 8192**3


def _gemm(sm_clock_hz: float | None = BASE_HZ, **extra: object):
    """A bf16 GEMM at 95% of the tensor peak its SMs could reach at ``BASE_HZ``."""
    seconds = GEMM_FLOP / (0.95 * BF16_AT_BASE)
    return make_kernel(
        "gemm_bf16",
        flops={"tensor_bf16": GEMM_FLOP},
        dram_bytes=3 * 2 * 8192**2,
        time_s=seconds,
        sm_clock_hz=sm_clock_hz,
        **extra,
    )


def test_a_gemm_at_base_clocks_reads_95_percent_not_77_with_a_note():
    run = make_run(kernels=[_gemm(memory_clock_hz=2.6e9)])
    roof, note = at_report_clocks(H100, run)
    assert place_kernel(run.kernels[0], H100.roof()).percent_of_roof == pytest.approx(73.4, abs=0.1)
    assert place_kernel(run.kernels[0], roof).percent_of_roof == pytest.approx(95.0, abs=0.01)
    assert roof.source == "datasheet" and roof.device == "H100-SXM5"  # the same history
    # above-roof tells a cache-resident kernel by the L2 size: scaling used to drop it
    assert roof.l2_cache_bytes == H100.l2_cache_bytes and roof.l2_cache_bytes
    assert roof.peak_flop_per_s["tensor_bf16"] == pytest.approx(BF16_AT_BASE)
    assert roof.bandwidth_byte_per_s["l2"] == pytest.approx(8.99e12 * BASE_HZ / 1.98e9)
    assert note is not None
    assert "SM clock 1.53 GHz against the 1.98 GHz boost clock" in note
    assert "FLOP/s peaks and L1/L2 bandwidth x0.773" in note
    # H100-SXM5 has no nominal memory clock in the catalog: DRAM is left, and the note says so
    assert roof.bandwidth_byte_per_s["dram"] == 3.35e12
    assert "no nominal memory clock for H100-SXM5: DRAM bandwidth left as the datasheet's" in note


def test_dram_bandwidth_scales_by_the_memory_clock_where_the_catalog_has_the_nominal_one():
    a10 = builtin_catalog().lookup("A10")
    kernel = _gemm(sm_clock_hz=0.8475e9, memory_clock_hz=6.1e9)
    run = make_run(device="NVIDIA A10", kernels=[kernel])
    roof, note = at_report_clocks(a10, run)
    assert roof.bandwidth_byte_per_s["dram"] == pytest.approx(0.6e12 * 6.1 / 6.251)
    assert roof.peak_flop_per_s["fp32"] == pytest.approx(31.2e12 * 0.5)
    assert note is not None and "against the nominal 6.25 GHz: DRAM bandwidth x0.976" in note


def test_boost_clocks_and_clockless_reports_keep_the_datasheet_roof_and_say_nothing():
    for kernel in (_gemm(sm_clock_hz=1.975e9), _gemm(sm_clock_hz=None)):
        roof, note = at_report_clocks(H100, make_run(kernels=[kernel]))
        assert roof == H100.roof() and note is None
    # Tools other than ncu record the default clock, not the one the kernels ran at.
    device = DeviceInfo(name="NVIDIA H100 80GB HBM3", sm_clock_hz=1.2e9)
    clockless = _gemm(sm_clock_hz=None)
    nvbench = make_run(device=device, kernels=[clockless], tool="nvbench")
    roof, note = at_report_clocks(H100, nvbench)
    assert roof == H100.roof() and note is None
    # ncu's device clock stands in for kernels that carry none (a record stored before).
    roof, note = at_report_clocks(H100, make_run(device=device, kernels=[clockless]))
    assert note is not None and "SM clock 1.2 GHz" in note


def test_kernels_at_different_clocks_scale_by_their_time_weighted_mean_and_say_so():
    slow = _gemm(sm_clock_hz=1.0e9, key="a")
    fast = _gemm(sm_clock_hz=1.8e9, key="b")
    roof, note = at_report_clocks(H100, make_run(kernels=[slow, fast]))
    assert roof.peak_flop_per_s["fp32"] == pytest.approx(66.9e12 * 1.4 / 1.98)
    assert note is not None and "time-weighted mean of kernels at 1 GHz to 1.8 GHz" in note


def test_a_card_without_a_boost_clock_in_the_catalog_is_not_scaled_but_warned_about():
    gh200 = builtin_catalog().lookup("GH200-96GB")
    assert gh200.boost_clock_hz is None
    run = make_run(device="NVIDIA GH200 480GB", kernels=[_gemm(sm_clock_hz=1.47e9)])
    roof, note = at_report_clocks(gh200, run)
    assert roof == gh200.roof()
    assert note is not None and "is not scaled to the report's clocks" in note
    assert "the catalog has no boost clock for GH200-96GB" in note


def test_a_clock_no_hardware_runs_at_leaves_the_roof_unscaled_and_is_named():
    """A report's SM clock of 1.64e-06 GHz cut every peak 300-fold, with only a note."""
    a10 = builtin_catalog().lookup("A10")
    kernel = _gemm(sm_clock_hz=1640.0, memory_clock_hz=6.1e9)  # Hz where MHz was meant
    roof, note = at_report_clocks(a10, make_run(device="NVIDIA A10", kernels=[kernel]))
    assert roof.peak_flop_per_s == a10.roof().peak_flop_per_s
    assert roof.bandwidth_byte_per_s["dram"] == pytest.approx(0.6e12 * 6.1 / 6.251)
    assert note is not None and "the report's SM clock, 1.64e-06 GHz, is far from" in note
    alone = _gemm(sm_clock_hz=5.0e9)  # 2.5x the boost, and no memory clock
    roof, note = at_report_clocks(H100, make_run(kernels=[alone]))
    assert roof == H100.roof()
    assert note == (
        "H100-SXM5's datasheet roof is not scaled: the report's SM clock, 5 GHz, is far from "
        "the datasheet's 1.98 GHz (a unit slip or a bad counter?): left out"
    )


def test_kernels_of_a_report_without_clocks_keep_the_datasheet_roof_beside_one_with_clocks():
    """An ncu report and a Kineto trace of one run: the trace's kernels ran at clocks unknown."""
    ncu = _gemm(key="gemm", source=SourceRef(path="/ci/profile.ncu-rep", format="ncu-rep"))
    trace = SourceRef(path="/ci/trace.json", format="kineto-trace")
    copy = make_kernel("copy", flops={}, sm_clock_hz=None, source=trace)
    roof, note = at_report_clocks(H100, make_run(kernels=[ncu, copy]))
    assert isinstance(roof, ClockedRoof) and roof.unscaled == H100.roof()
    assert place_kernel(ncu, roof).roof.peak_flop_per_s["tensor_bf16"] == pytest.approx(
        BF16_AT_BASE
    )
    assert place_kernel(copy, roof).roof == H100.roof()  # as the trace alone is placed
    assert place_kernel(copy, roof) == place_kernel(
        copy, at_report_clocks(H100, make_run(kernels=[copy]))[0]
    )
    assert note is not None
    assert note.startswith(
        "H100-SXM5's datasheet roof is scaled to the clocks of profile.ncu-rep (1 kernel): "
    )
    assert note.endswith(
        "trace.json (1 kernel) records no clock: its kernels stay on the datasheet roof as it is"
    )
    # A re-measurement of the trace comes in a file of another name: its kernel records no clock.
    rerun = copy.model_copy(update={"source": SourceRef(path="/ci/trace-rerun.json")})
    assert place_kernel(rerun, roof).roof == H100.roof()
    # One report with a clock: no other report to keep apart, the roof is one.
    assert not isinstance(at_report_clocks(H100, make_run(kernels=[ncu]))[0], ClockedRoof)
