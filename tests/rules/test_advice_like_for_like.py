"""The advice of a kernel that fell to a lower roof: far from the roof that matters.

A GEMM that fell off the tensor cores of an H100 (the same 1 TFLOP, bound by fp32 instead of
tensor_bf16: 1.26 ms → 17.6 ms) sits at 85% of the fp32 roof. Its advice read
"change-algorithm: near the compute roof, only a different algorithm, precision or hardware
goes faster"; it is at 5.7% of the tensor_bf16 roof it ran at, and the fix is to use the
tensor cores again (compute efficiency).
"""

from __future__ import annotations

from rules import evaluate
from rules.advice import Advice
from rules.testing import cases_from_document

GEMM = {"key": "gemm", "bytes": {"dram": 1.0e8}}
DOCUMENT = {
    "rule": "time-regression",
    "device": {"catalog": "H100-SXM5"},
    "cases": {
        "fail_gemm_off_the_tensor_cores": {
            "baseline": {
                "kernels": [
                    {
                        **GEMM,
                        "flops": {"tensor_bf16": 1.0e12},
                        "times": [0.001264, 0.001266, 0.001262, 0.001264, 0.001265],
                    }
                ]
            },
            "current": {"kernels": [{**GEMM, "flops": {"fp32": 1.0e12}, "time_s": 0.0176}]},
            "expected": [{"rule": "time-regression", "kernel": "gemm", "severity": "fail"}],
        }
    },
}


def test_a_gemm_off_the_tensor_cores_is_advised_to_use_them_again() -> None:
    [case] = cases_from_document(DOCUMENT, "advice")
    verdict = evaluate(case.context()).verdict
    [row] = verdict.kernels
    assert row.binding == "fp32" and round(row.percent_of_roof or 0) == 85
    assert round(row.percent_of_baseline_roof or 0, 1) == 5.7  # of tensor_bf16
    assert row.advice == Advice.COMPUTE_EFFICIENCY
    [finding] = [f for f in verdict.findings if f.rule == "time-regression"]
    assert finding.severity.value == "fail" and finding.advice == Advice.COMPUTE_EFFICIENCY
