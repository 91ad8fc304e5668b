"""above-roof advises on the roof, and knows a 2 GB copy is not served from a 72 MB L2."""

from __future__ import annotations

from rules import evaluate
from rules.advice import Advice
from rules.testing import RuleCase


def above_roof(kernel: dict, device: dict) -> tuple[str, Advice | None]:
    spec = {"current": {"kernels": [kernel]}}
    verdict = evaluate(RuleCase("above-roof", "fail_case", "test", spec, device).context()).verdict
    finding = next(f for f in verdict.findings if f.rule == "above-roof")
    return finding.message, finding.advice


def test_a_compute_bound_gemm_above_its_roof_is_told_to_check_the_roof() -> None:
    tiny = {
        "name": "tiny",
        "peak_flop_per_s": {"fp32": 1e12},
        "bandwidth_byte_per_s": {"dram": 1e11},
    }
    gemm = {"key": "gemm", "flops": {"fp32": 1e10}, "bytes": {"dram": 1e7}, "time_s": 0.0072}
    _, advice = above_roof(gemm, tiny)
    assert advice == Advice.CHECK_ROOF  # not "Not enough counters to place the kernel"


def test_a_copy_far_larger_than_the_l2_is_not_called_cache_resident() -> None:
    rtx4090 = {"catalog": "RTX-4090"}  # 72 MB of L2, 1,008 GB/s
    copy = {"key": "copy", "flops": {}, "bytes": {"dram": 2.1e9}, "time_s": 1.5e-3}
    message, _ = above_roof(copy, rtx4090)
    assert "cache-resident" in message and "not cache-resident (2.1 GB moved, L2 72 MB)" in message
    small = {"key": "copy", "flops": {}, "bytes": {"dram": 2.1e7}, "time_s": 1.5e-5}
    assert "probably cache-resident" in above_roof(small, rtx4090)[0]
