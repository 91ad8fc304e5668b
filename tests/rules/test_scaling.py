"""Percent of roof across cards (``rules.scaling``), on real catalog pairs."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from factories import make_kernel, make_run

from collectors.schema import KernelRecord, RunKind, RunRecord
from rules import RuleContext, builtin_catalog, evaluate, place_run
from rules.crossdevice import DeviceBaseline, Keeping, device_levels, forecast, keeping, scale
from rules.frames import history_from_runs
from rules.roofline import Roof
from rules.scaling import CROSS_DEVICE_TOLERANCE, OWN_RUNS_SETTLED, MissingResource, Work, predict

START = datetime(2026, 3, 1, tzinfo=UTC)


def roof(name: str) -> Roof:
    return builtin_catalog().lookup(name).roof()


def work_on(name: str, flops: dict[str, float], nbytes: dict[str, float]) -> Work:
    """A kernel's work as the store keeps it, placed on card ``name``."""
    kernel = KernelRecord(name="k", key="k", duration_s=1.0, flops=flops, bytes=nbytes)
    run = make_run(device=name, kernels=[kernel])
    placement = place_run(run, roof(name))["k"]
    return Work(
        flops=placement.total_flops,
        nbytes=nbytes,
        peak_flop_time_s=placement.peak_flop_time_s,
        binding=placement.binding,
    )


@pytest.mark.parametrize(
    ("old", "new", "flops", "nbytes", "expected", "binding"),
    [
        # memory-bound: the ratio of the HBM bandwidths
        ("A100-SXM4-80GB", "H100-SXM5", {"fp32": 5e8}, {"dram": 1e9}, 2.039 / 3.35, "dram"),
        # compute-bound on the tensor cores: the ratio of the bf16 peaks
        ("A100-SXM4-80GB", "H100-SXM5", {"tensor_bf16": 1e12}, {"dram": 2e9}, 312 / 989.4, None),
        ("V100-SXM2-32GB", "A100-SXM4-80GB", {"tensor_fp16": 1e12}, {"dram": 4e9}, 125 / 312, None),
        ("L4", "L40S", {"fp32": 0.0}, {"dram": 6e8}, 300 / 864, "dram"),
    ],
)
def test_one_binding_resource_scales_by_its_ratio(
    old: str,
    new: str,
    flops: dict[str, float],
    nbytes: dict[str, float],
    expected: float,
    binding: str | None,
) -> None:
    work = work_on(old, flops, nbytes)
    predicted = predict(work, roof(old), roof(new))
    assert predicted is not None
    assert predicted.expected_time_ratio == pytest.approx(expected, rel=1e-9)
    assert predicted.source_binding == predicted.target_binding == (binding or work.binding)


def test_the_whole_roofline_predicts_when_the_ridge_moved() -> None:
    # Intensity 120: compute-bound on an RTX 3090 (ridge 76), memory-bound on a 4090 (164).
    work = work_on("RTX-3090", {"tensor_bf16": 1.2e11}, {"dram": 1e9})
    predicted = predict(work, roof("RTX-3090"), roof("RTX-4090"))
    assert predicted is not None
    assert (predicted.source_binding, predicted.target_binding) == ("tensor_bf16", "dram")
    assert predicted.source_s == pytest.approx(1.2e11 / 71e12)
    assert predicted.target_s == pytest.approx(1e9 / 1008e9)
    assert predicted.expected_time_ratio == pytest.approx((1e9 / 1008e9) / (1.2e11 / 71e12))
    assert predicted.expected_time_ratio > 71 / 165.2 * 1.3  # the peaks alone are far off


def test_a_memory_bound_kernel_keeps_its_precision_for_the_compute_side() -> None:
    # Bound by dram on the A100; its tensor_bf16 FLOPs are named by peak_flop_time_s.
    work = work_on("A100-SXM4-80GB", {"tensor_bf16": 1e11}, {"dram": 1e9})
    assert work.binding == "dram"
    assert work.precision(roof("A100-SXM4-80GB")) == "tensor_bf16"


def test_a_card_without_the_precision_or_tier_cannot_be_judged() -> None:
    fp8 = work_on("H100-SXM5", {"tensor_fp8": 1e13}, {"dram": 1e9})
    with pytest.raises(MissingResource, match="A100-SXM4-80GB has no peak for tensor_fp8"):
        predict(fp8, roof("H100-SXM5"), roof("A100-SXM4-80GB"))
    l2_bound = work_on("H100-SXM5", {"fp32": 1e6}, {"dram": 1e6, "l2": 1e10})
    assert l2_bound.binding == "l2"
    with pytest.raises(MissingResource, match="H200-SXM has no bandwidth for l2"):
        predict(l2_bound, roof("H100-SXM5"), roof("H200-SXM"))


def runs_on(device: str, times: list[float], *, key: str = "gemv", day: int = 0) -> list[RunRecord]:
    return [
        make_run(
            commit=f"{day + i:07x}",
            timestamp=START + timedelta(days=day + i),
            device=device,
            kernels=[make_kernel(key, flops={"fp32": 5e8}, dram_bytes=1e9, time_s=t)],
        )
        for i, t in enumerate(times)
    ]


def test_the_level_is_the_current_segment_and_its_times() -> None:
    # 20 nights at 0.700 ms, then a fix: 12 nights at 0.577 ms (85% of the A100's dram roof).
    times = [0.000700] * 20 + [0.000577] * 12
    frame = history_from_runs(runs_on("A100-SXM4-80GB", times), roof("A100-SXM4-80GB"))
    level = device_levels(frame)["gemv"]
    assert level.percent == pytest.approx(100 * (1e9 / 2.039e12) / 0.000577)
    assert level.time_s == pytest.approx(0.000577)
    assert (level.n, level.runs, len(level.history)) == (12, 32, 32)
    assert level.t_roof_s == pytest.approx(1e9 / 2.039e12)
    assert level.work.binding == "dram"


def test_levels_of_a_compact_shuffled_frame_are_the_same() -> None:
    # The digest hands a card's history over with strings as categories, millions of rows.
    times = [0.000700] * 20 + [0.000577] * 12
    runs = runs_on("A100-SXM4-80GB", times) + runs_on("A100-SXM4-80GB", times[::-1], key="gemm")
    frame = history_from_runs(runs, roof("A100-SXM4-80GB"))
    strings = ["commit", "kernel_key", "kernel_name", "device", "binding", "regime", "roof_source"]
    compact = frame.astype(dict.fromkeys(strings, "category")).sample(frac=1.0, random_state=3)
    assert device_levels(compact) == device_levels(frame)
    assert set(device_levels(frame)) == {"gemm", "gemv"}
    gemv = compact[compact["kernel_key"] == "gemv"]  # "gemm" stays a category, with no rows
    assert device_levels(gemv) == {"gemv": device_levels(frame)["gemv"]}


def test_percent_now_over_before_is_expected_over_measured() -> None:
    frame = history_from_runs(runs_on("A100-SXM4-80GB", [0.000577] * 8), roof("A100-SXM4-80GB"))
    level = device_levels(frame)["gemv"]
    scaled = scale(level, roof("A100-SXM4-80GB"), roof("H100-SXM5"), [0.000543])
    assert scaled is not None
    assert scaled.percent / level.percent == pytest.approx(
        scaled.expected_time_ratio / scaled.time_ratio
    )
    assert scaled.percent == pytest.approx(100 * (1e9 / 3.35e12) / 0.000543)  # same work
    assert keeping(scaled) == Keeping.BEHIND
    kept = scale(level, roof("A100-SXM4-80GB"), roof("H100-SXM5"), [0.000373])
    assert kept is not None and keeping(kept) == Keeping.KEPT_UP
    fast = scale(level, roof("A100-SXM4-80GB"), roof("H100-SXM5"), [0.000250])
    assert fast is not None and keeping(fast) == Keeping.AHEAD
    # Two measurements: the better one counts (one dip does not call a kernel behind).
    both = scale(level, roof("A100-SXM4-80GB"), roof("H100-SXM5"), [0.000543, 0.000373])
    assert both is not None and keeping(both) == Keeping.KEPT_UP


def test_the_tolerance_is_the_cross_card_spread() -> None:
    assert CROSS_DEVICE_TOLERANCE == 0.15
    frame = history_from_runs(runs_on("A100-SXM4-80GB", [0.000577] * 8), roof("A100-SXM4-80GB"))
    level = device_levels(frame)["gemv"]
    # 14% below the level the roofs predict: within the tolerance; 16%: behind.
    predicted_time = 0.000577 * (2.039 / 3.35)
    within = scale(level, roof("A100-SXM4-80GB"), roof("H100-SXM5"), [predicted_time / 0.86])
    beyond = scale(level, roof("A100-SXM4-80GB"), roof("H100-SXM5"), [predicted_time / 0.84])
    assert within is not None and keeping(within) == Keeping.KEPT_UP
    assert beyond is not None and keeping(beyond) == Keeping.BEHIND


def test_forecast_keeps_the_percent_of_roof() -> None:
    frame = history_from_runs(runs_on("A100-SXM4-80GB", [0.000577] * 8), roof("A100-SXM4-80GB"))
    level = device_levels(frame)["gemv"]
    ahead = forecast(level, roof("A100-SXM4-80GB"), roof("H200-SXM"))
    assert ahead is not None
    assert ahead.time_s == pytest.approx((1e9 / 4.8e12) / (level.percent / 100))
    assert ahead.time_ratio == pytest.approx(2.039 / 4.8, rel=1e-3)


def context_after_the_swap(own_nights: int) -> RuleContext:
    """30 A100 nights at 85% of roof, ``own_nights`` H100 nights, a PR at 55% on the H100."""
    a100, h100 = roof("A100-SXM4-80GB"), roof("H100-SXM5")
    other = history_from_runs(runs_on("A100-SXM4-80GB", [0.000577] * 30), a100)
    own = history_from_runs(runs_on("H100-SXM5", [0.000543] * own_nights, day=40), h100)
    run = runs_on("H100-SXM5", [0.000543], day=60)[0].model_copy(update={"kind": RunKind.PR})
    return RuleContext(run=run, roof=h100, history=own, cross_device=DeviceBaseline(a100, other))


def test_the_own_card_takes_over_at_its_settled_level() -> None:
    young = context_after_the_swap(OWN_RUNS_SETTLED - 1)
    assert set(young.device_scaling) == {"gemv"}
    settled = context_after_the_swap(OWN_RUNS_SETTLED)
    assert settled.device_scaling == {}
    verdict = evaluate(settled).verdict
    assert verdict.baseline is not None and verdict.baseline.device == "H100-SXM5"
    assert not any(f.rule == "device-scaling" for f in verdict.findings)


def test_the_verdict_names_the_other_card() -> None:
    verdict = evaluate(context_after_the_swap(0)).verdict
    kernel = verdict.kernels[0]
    assert kernel.status == "suspect"
    assert kernel.baseline is not None and kernel.baseline.device == "A100-SXM4-80GB"
    assert kernel.expected_time_ratio == pytest.approx(2.039 / 3.35)
    assert kernel.time_ratio == pytest.approx(0.000543 / 0.000577)
    assert verdict.baseline is not None and verdict.baseline.device == "A100-SXM4-80GB"
    assert verdict.expected_time_ratio == pytest.approx(2.039 / 3.35)
    [finding] = [f for f in verdict.findings if f.rule == "device-scaling"]
    assert "expected 1.64× faster on H100-SXM5, measured 1.06× faster: 85% → 55%" in (
        finding.message
    )
    assert finding.advice is not None


def test_a_kernel_that_scaled_is_unchanged_not_new() -> None:
    ctx = context_after_the_swap(0)
    run = runs_on("H100-SXM5", [0.000577 * 2.039 / 3.35], day=60)[0]
    verdict = evaluate(replace(ctx, run=run)).verdict
    assert [k.status for k in verdict.kernels] == ["unchanged"]
    assert not verdict.findings
    assert math.isclose(verdict.kernels[0].percent_of_baseline_roof or 0, 85.0, rel_tol=0.01)


def test_aliases_follow_a_renamed_kernel_across_cards() -> None:
    ctx = context_after_the_swap(0)
    renamed = ctx.run.model_copy(
        update={"kernels": (ctx.run.kernels[0].model_copy(update={"key": "gemv_v2"}),)}
    )
    config = ctx.config.model_copy(update={"aliases": {"gemv": "gemv_v2"}})
    moved = replace(ctx, run=renamed, config=config)
    assert set(moved.device_scaling) == {"gemv_v2"}
