"""A kernel whose counters all read zero is placed nowhere, and that is no finding.

A flag reset moving 4 KB of DRAM each night read 0 bytes on a PR (every byte hit L2):
``check`` called it compute-bound, warned ``regime-flip`` "(bound by None)" and
``lost-counters`` "it lacks no roof"; and its verdict JSON, whose unbounded intensity is
null, could not be read back (``roofguard comment --verdict``, ``upload``'s answer).
"""

from __future__ import annotations

from csv_checks import check_csv


def test_zero_flops_and_zero_bytes_is_no_regime_flip(tmp_path) -> None:
    steady = "gemm,0.001,1e10,1e8,1\n"
    for night in range(6):
        check_csv(tmp_path, "acme/zero", f"n{night}", steady + "flag_reset,2e-6,0,4096,1\n")
    rows = steady + "flag_reset,2e-6,0,0,1\n"
    verdict = check_csv(tmp_path, "acme/zero", "pr1", rows, "--branch", "feat", "--pr", "1")
    assert verdict.findings == (), [f.message for f in verdict.findings]
    [reset] = [k for k in verdict.kernels if k.name == "flag_reset"]
    assert reset.regime is None and reset.missing == ("no work counted (0 FLOPs, 0 bytes)",)
