"""A group's MFU: every run against a real precision's peak, never a blend of the baseline's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from rules import evaluate
from rules.testing import RuleCase
from rules.verdict import GroupVerdict

BF16, FP32, FP8 = 989.4e12, 66.9e12, 1978.9e12
# The demo's speculative-verify GEMM: 240.5 GFLOP, 71.9% of the tensor_bf16 peak on tensor
# cores; 5.1 ms once it fell onto the fp32 units.
GEMM_FLOPS, ON_TENSOR_S, ON_FP32_S = 240.5e9, 0.338e-3, 5.10e-3


def gemm(precision: str, *times: float, key: str = "verify_gemm") -> dict[str, Any]:
    return {"key": key, "flops": {precision: GEMM_FLOPS}, "bytes": {"dram": 5.45e8}, "times": times}


def judged(spec: Mapping[str, Any]) -> tuple[GroupVerdict, list[float]]:
    """The group's verdict row and its MFU per baseline run (oldest first)."""
    case = RuleCase("roof-drop", "pass_group_mfu", "test", spec, {"catalog": "H100-SXM5"})
    ctx = case.context()
    (group,) = evaluate(ctx).verdict.groups
    return group, [float(v) for v in ctx.groups[group.name].history["mfu"]]


def test_one_fp32_night_in_a_bf16_baseline_does_not_blend_the_peak() -> None:
    """13 bf16 nights and one fp32 night: the reference is tensor_bf16, not a 498 TF blend.

    The blend (``14 / (13 / P_bf16 + 1 / P_fp32)``) sat within 2% of tensor_tf32's peak: the
    group read "9.5% (was 142.8%) of tensor_tf32", a precision no kernel ran at.
    """
    spec = {
        "config": {"groups": [{"name": "verify", "pattern": "verify_*"}]},
        "baseline": [
            {"kernels": [gemm("tensor_bf16", *[ON_TENSOR_S] * 13)]},
            {"kernels": [gemm("fp32", ON_FP32_S)]},
        ],
        "current": {"kernels": [gemm("fp32", ON_FP32_S)]},
    }
    group, history = judged(spec)
    on_tensor, on_fp32 = GEMM_FLOPS / (BF16 * ON_TENSOR_S), GEMM_FLOPS / (BF16 * ON_FP32_S)
    assert group.mfu_precision == "tensor_bf16"
    assert group.mfu == pytest.approx(on_fp32, rel=1e-3)
    assert history == pytest.approx([on_tensor] * 13 + [on_fp32], rel=1e-3)
    assert group.mfu_baseline is not None and group.mfu_baseline.center is not None
    assert group.mfu_baseline.center == pytest.approx(on_tensor, rel=1e-3)


def test_work_at_a_faster_precision_is_held_to_its_own_peak_and_the_mix_is_not_named() -> None:
    """A bf16 GEMM and an fp8 one, each at 90% of its peak, declared tensor_bf16: 90%, not 135%."""
    fp8_time = GEMM_FLOPS / (0.9 * FP8)
    bf16_time = GEMM_FLOPS / (0.9 * BF16)
    kernels = [gemm("tensor_bf16", bf16_time), gemm("tensor_fp8", fp8_time, key="verify_fp8")]
    spec = {
        "config": {
            "groups": [{"name": "verify", "pattern": "verify_*", "precision": "tensor_bf16"}]
        },
        "baseline": {"runs": 5, "kernels": kernels},
        "current": {"kernels": kernels},
    }
    group, history = judged(spec)
    assert group.mfu == pytest.approx(0.9, rel=1e-3)
    assert history == pytest.approx([0.9] * 5, rel=1e-3)
    assert group.mfu_precision is None


def test_a_group_at_one_precision_reads_against_its_peak() -> None:
    spec = {
        "config": {"groups": [{"name": "verify", "pattern": "verify_*"}]},
        "baseline": {"kernels": [gemm("tensor_bf16", *[ON_TENSOR_S] * 6)]},
        "current": {"kernels": [gemm("tensor_bf16", ON_TENSOR_S)]},
    }
    group, history = judged(spec)
    assert group.mfu_precision == "tensor_bf16"
    assert group.mfu == pytest.approx(GEMM_FLOPS / (BF16 * ON_TENSOR_S), rel=1e-6)
    assert max(history) <= 1.0
