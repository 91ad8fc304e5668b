"""``roofguard inspect`` marks a percent of roof that times part of the work only, as check does.

A V100's roof has no L2 or L1 bandwidth: check said "new: ≥ 48.0%" and "≥ 94.6%" where
inspect printed 48.0 and 94.6 as if exact; an A40 kernel whose tensor-core work is not
counted read 32.3 beside "unplaced: tensor-core work not counted".
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rules.verdict import Verdict
from service.cli import run

LOWER_BOUNDS = [
    "ncu-csv/wangzy0327_cuda-roofline__output_V100.csv",  # no L2/L1 bandwidth on the roof
    "ncu-rep/AveryClapp_ESMM-Research__profile_output.ncu-rep",  # A10G
    "ncu-rep/tanvisharma_nsight-compute-files__3136_64_64_rtx2080ti_sgemm.ncu-rep",
    "ncu-rep/AlpriElse_cs599k__silu-2025-04-18-v7.ncu-rep",  # GH200
    "ncu-rep/eschnett_IndexSpaces.jl__profile.ncu-rep",  # tensor-core work not counted
]


def _checked(tmp_path: Path, report: Path) -> Verdict:
    out = tmp_path / "verdict.json"
    db = f"sqlite:///{tmp_path / 'history.db'}"
    argv = ["check", str(report), "--repo", "acme/k", "--commit", "c1", "--branch", "main"]
    assert run([*argv, "--db", db, "--format", "json", "--output", str(out)]) in (0, 1)
    return Verdict.model_validate_json(out.read_text())


@pytest.mark.parametrize("name", LOWER_BOUNDS)
def test_inspect_marks_the_lower_bounds_check_marks(name, corpus_dir, tmp_path, capsys):
    report = corpus_dir / name
    assert run(["inspect", str(report)]) == 0
    out = capsys.readouterr().out
    marked = sorted(re.findall(r"≥ (\d+\.\d)", out))
    verdict = _checked(tmp_path, report)
    bounds = [k for k in verdict.kernels if k.percent_is_lower_bound]
    assert bounds  # each report has one
    assert marked == sorted(f"{k.percent_of_roof:.1f}" for k in bounds)
    assert "≥ before a percent of roof: a lower bound" in out
    assert bounds[0].missing[0][:40] in " ".join(out.split())  # the legend says why


def test_a_kernel_that_counted_no_work_has_no_percent_and_no_mark(tmp_path, capsys):
    report = tmp_path / "night.csv"
    header = "name,duration_s,flops_fp32,bytes_dram,launches\n"
    report.write_text(header + "gemm,0.001,1e10,1e8,1\nflag_reset,2e-6,0,0,1\n")
    assert run(["inspect", str(report), "--device", "H100-SXM5"]) == 0
    out = capsys.readouterr().out
    reset = next(line for line in out.splitlines() if line.startswith("flag_reset"))
    assert "≥" not in out and " - " in reset
