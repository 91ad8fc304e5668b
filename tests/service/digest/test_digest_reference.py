"""A change reads the same in every weekly digest while the level before it is in reach.

A GEMM at 70% of its tensor_bf16 roof fell off the tensor cores (15x slower, 70% of the fp32
roof). The digest read percent of roof against the binding most runs in its window held: once
the fp32 nights outnumbered the tensor ones, the same unresolved regression read "1,035% →
69%" instead of the "70% → 4.7%" of the weeks before.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from factories import make_kernel, make_run

from service.cli import run

FIRST = datetime(2026, 3, 2, 3, tzinfo=UTC)  # a Monday
GEMM_FLOP = 2 * 8192**3
TENSOR_S = GEMM_FLOP / (0.70 * 989.4e12)  # 70% of the H100's tensor_bf16 roof
TENSOR_NIGHTS, FP32_NIGHTS = 20, 30


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("reference")
    url = f"sqlite:///{folder / 'history.db'}"
    rng = np.random.default_rng(3)
    for night in range(TENSOR_NIGHTS + FP32_NIGHTS):
        fell = night >= TENSOR_NIGHTS
        gemm = make_kernel(
            "gemm_bf16",
            flops={"fp32" if fell else "tensor_bf16": GEMM_FLOP},
            dram_bytes=4e8,
            time_s=TENSOR_S * (15 if fell else 1) * (1 + rng.normal(0, 0.003)),
        )
        copy = make_kernel(
            "copy", flops={}, dram_bytes=2e9, time_s=1e-3 * (1 + rng.normal(0, 0.003))
        )
        report = folder / f"night{night}.json"
        stamp = FIRST + timedelta(days=night)
        report.write_text(
            make_run(kernels=[gemm, copy], timestamp=stamp, device="H100-SXM5").model_dump_json()
        )
        args = ["ingest", str(report), "--repo", "acme/kernels", "--commit", f"n{night:04d}"]
        assert run([*args, "--branch", "main", "--kind", "nightly", "--db", url]) == 0
    return url


def _week(db: str, first_day: int, capsys) -> dict:
    start = (FIRST + timedelta(days=first_day)).date()
    period = ["--from", start.isoformat(), "--to", (start + timedelta(days=6)).isoformat()]
    capsys.readouterr()
    assert run(["digest", "--repo", "acme/kernels", *period, "--db", db, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _figures(entry: dict) -> tuple[float, float]:
    return round(entry["before"], 1), round(entry["after"], 1)


def test_a_fall_off_the_tensor_cores_reads_the_same_once_its_nights_outnumber_the_old(db, capsys):
    landed = _week(db, TENSOR_NIGHTS, capsys)
    (fell,) = [e for e in landed["regressions"] if e["kernel"] == "gemm_bf16"]
    assert _figures(fell) == (70.0, 4.7)
    later = _week(db, TENSOR_NIGHTS + 21, capsys)  # 20 tensor nights in reach, 27 fp32 ones
    (open_,) = [e for e in later["unresolved"] if e["kernel"] == "gemm_bf16"]
    assert _figures(open_) == _figures(fell)
    assert open_["since"] == fell["since"]
