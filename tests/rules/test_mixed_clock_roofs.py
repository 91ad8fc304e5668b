"""A kernel beside a report of other clocks keeps its own roof across cards and like for like.

A run of an ncu report (clocks recorded, its roof scaled to them) and a trace that records no
clock places the trace's kernels on the datasheet roof as it is (``rules.ClockedRoof``). The
figures read from such a run on another card, or against another binding, must be the ones
a run of each kernel's report alone gives.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from factories import make_kernel, make_run

from collectors.schema import KernelRecord, RunKind, RunRecord, SourceRef
from rules import ClockedRoof, RuleContext, at_report_clocks, builtin_catalog, like_for_like_history
from rules.crossdevice import DeviceBaseline, device_levels, forecast, scale
from rules.frames import history_from_runs
from rules.roofline import Roof

H100, A100 = builtin_catalog().lookup("H100-SXM5"), builtin_catalog().lookup("A100-SXM4-80GB")
BASE_HZ = 1.53e9  # ncu's --clock-control base: every H100 peak x0.773
NCU = SourceRef(path="/ci/profile.ncu-rep", format="ncu-rep")
TRACE = SourceRef(path="/ci/trace.json", format="kineto-trace")
START = datetime(2026, 3, 1, tzinfo=UTC)
FLOPS = 2e12


def _gemm(key: str, precision: str, peak: float, clock: float | None) -> KernelRecord:
    """A GEMM at 70% of ``peak`` (its precision's peak on the roof it is placed on)."""
    return make_kernel(
        key,
        flops={precision: FLOPS},
        dram_bytes=1e8,
        time_s=FLOPS / peak / 0.70,
        sm_clock_hz=clock,
        source=NCU if clock else TRACE,
    )


def _h100_kernels(night: int, *, fall_at: int = 99) -> list[KernelRecord]:
    """The trace's GEMM and the report's, each off the tensor cores from ``fall_at`` on."""
    precision = "fp32" if night >= fall_at else "tensor_bf16"
    datasheet = H100.roof().peak_flop_per_s[precision]
    scaled = datasheet * BASE_HZ / 1.98e9  # the H100's boost clock
    return [
        _gemm("trace_gemm", precision, datasheet, None),
        _gemm("ncu_gemm", precision, scaled, BASE_HZ),
    ]


def _runs(kernels: list[list[KernelRecord]], device: str) -> list[RunRecord]:
    return [
        make_run(commit=f"{n:07x}ab", timestamp=START + timedelta(days=n), device=device, kernels=k)
        for n, k in enumerate(kernels)
    ]


def _alone(runs: list[RunRecord], source: SourceRef) -> tuple[list[RunRecord], Roof]:
    """Each run with the kernels of one report only, and the roof such a run is placed on."""
    kept = [
        r.model_copy(update={"kernels": [k for k in r.kernels if k.source == source]}) for r in runs
    ]
    return kept, at_report_clocks(H100, kept[0])[0]


def _mixed(runs: list[RunRecord]) -> Roof:
    roof = at_report_clocks(H100, runs[0])[0]
    assert isinstance(roof, ClockedRoof)
    return roof


def _like(runs: list[RunRecord], roof: Roof, key: str) -> list[float]:
    frame = history_from_runs(runs, roof)
    like = like_for_like_history(frame, dict.fromkeys(range(1, len(runs) + 1), roof))
    return like[like["kernel_key"] == key]["percent_of_roof"].tolist()


@pytest.mark.parametrize(("key", "source"), [("trace_gemm", TRACE), ("ncu_gemm", NCU)])
def test_like_for_like_reads_each_kernel_of_a_mixed_run_as_its_report_alone(key, source):
    """Off the tensor cores, the trace's GEMM read 6.1% of its bf16 roof in a mixed run, 4.7% alone.

    Its fp32 nights were read against the bf16 peak scaled to the report's clocks.
    """
    runs = _runs([_h100_kernels(n, fall_at=7) for n in range(10)], "H100-SXM5")
    alone, roof = _alone(runs, source)
    assert _like(runs, _mixed(runs), key) == pytest.approx(_like(alone, roof, key))
    assert _like(alone, roof, key)[7:] == pytest.approx([70.0 * 66.9 / 989.4] * 3)


def _a100_history() -> DeviceBaseline:
    peak = A100.roof().peak_flop_per_s["tensor_bf16"]
    kernels = [[_gemm(k, "tensor_bf16", peak, None) for k in ("trace_gemm", "ncu_gemm")]] * 8
    runs = _runs(kernels, "A100-SXM4-80GB")
    return DeviceBaseline(A100.roof(), history_from_runs(runs, A100.roof()))


@pytest.mark.parametrize(("key", "source"), [("trace_gemm", TRACE), ("ncu_gemm", NCU)])
def test_a_mixed_run_judged_against_another_card_predicts_each_kernel_as_its_report_alone(
    key, source
):
    """Beside the report, the trace's GEMM was expected at 0.408 of its A100 time, 0.315 alone."""
    run = _runs([_h100_kernels(0)], "H100-SXM5")[0].model_copy(update={"kind": RunKind.PR})
    [alone], roof = _alone([run], source)
    other = _a100_history()
    together = RuleContext(run=run, roof=_mixed([run]), cross_device=other).device_scaling[key]
    apart = RuleContext(run=alone, roof=roof, cross_device=other).device_scaling[key]
    assert together.expected_time_ratio == pytest.approx(apart.expected_time_ratio)
    assert together.percent == pytest.approx(apart.percent) == pytest.approx(70.0)


@pytest.mark.parametrize(("key", "source"), [("trace_gemm", TRACE), ("ncu_gemm", NCU)])
def test_a_mixed_card_history_scales_and_forecasts_each_kernel_as_its_report_alone(key, source):
    """Levels read from mixed runs on the H100, judged and forecast on an A100 and an H200.

    The trace's GEMM was expected 2.45x slower on the A100 from mixed runs, 3.17x from its own.
    """
    runs = _runs([_h100_kernels(n) for n in range(8)], "H100-SXM5")
    alone, roof = _alone(runs, source)
    mixed = _mixed(runs)
    together = device_levels(history_from_runs(runs, mixed))[key]
    apart = device_levels(history_from_runs(alone, roof))[key]
    a100, h200 = A100.roof(), builtin_catalog().lookup("H200-SXM").roof()
    scaled = scale(together, mixed, a100, [together.time_s])
    expected = scale(apart, roof, a100, [apart.time_s])
    assert scaled is not None and expected is not None
    assert scaled.expected_time_ratio == pytest.approx(expected.expected_time_ratio)
    assert scaled.percent == pytest.approx(expected.percent)
    ahead, ahead_alone = forecast(together, mixed, h200), forecast(apart, roof, h200)
    assert ahead is not None and ahead_alone is not None
    assert ahead.time_s == pytest.approx(ahead_alone.time_s)
