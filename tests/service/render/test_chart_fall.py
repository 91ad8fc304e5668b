"""The roofline chart of a GEMM that fell off the tensor cores, beside a zero-FLOP copy.

The axes span every roof drawn and every point (current and baseline), so neither the tensor
roof the GEMM used to reach nor its baseline point is clipped; the copy, which has no place on
FLOP/s axes, is drawn on the strip of percent of the bandwidth roof.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from factories import make_kernel, make_run

from rules import BaselineSummary, KernelVerdict
from rules.hardware import builtin_catalog
from rules.placement import place_run
from service.cli import run
from service.render.charts import roofline_chart, run_points
from service.render.no_flops import STRIP_TITLE

H100 = builtin_catalog().lookup("H100-SXM5").roof()
GEMM_FLOPS = 2 * 4096**3  # 137 GFLOP
GEMM_BYTES = 3 * 2 * 4096**2
FP16_TIME, FP32_TIME = 0.2e-3, 3.0e-3  # ~70% of the tensor roof, then ~70% of the fp32 roof
COPY_BYTES, COPY_TIME = 2.1e9, 0.75e-3  # 2.1 GB in 0.75 ms: 83.6% of 3.35 TB/s


def _run(precision, gemm_time, when=datetime(2026, 11, 20, tzinfo=UTC)):
    return make_run(
        kernels=[
            make_kernel(
                "gemm", flops={precision: GEMM_FLOPS}, dram_bytes=GEMM_BYTES, time_s=gemm_time
            ),
            make_kernel("copy", flops={"fp32": 0.0}, dram_bytes=COPY_BYTES, time_s=COPY_TIME),
        ],
        timestamp=when,
    )


def _judged_gemm():
    base = BaselineSummary(n=14, center=70.0, spread=0.4, time_s=FP16_TIME, binding="tensor_fp16")
    return KernelVerdict(
        key="gemm",
        name="gemm",
        time_s=FP32_TIME,
        time_share=0.8,
        percent_of_roof=70.0,
        regime="compute-bound",
        binding="fp32",
        baseline=base,
    )


def _by_gid(fig, gid):
    found = [a for ax in fig.axes for a in [ax, *ax.get_children()] if a.get_gid() == gid]
    assert len(found) == 1, f"expected one artist {gid!r}, found {len(found)}"
    return found[0]


@pytest.fixture
def fallen():
    current = _run("fp32", FP32_TIME)
    points = run_points(current, place_run(current, H100), {}, [_judged_gemm()])
    return roofline_chart(H100, points), points


def test_axes_span_the_tensor_roof_and_the_baseline_point(fallen):
    fig, points = fallen
    ax = fig.axes[0]
    gemm = next(p for p in points if p.name == "gemm")
    assert gemm.baseline == pytest.approx((gemm.intensity, GEMM_FLOPS / FP16_TIME))
    tensor = _by_gid(fig, "roof:tensor_fp16:dram").get_xydata()
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    for x, y in [*tensor, (gemm.intensity, gemm.achieved_flop_per_s), gemm.baseline]:
        assert x0 <= x <= x1 and y0 <= y <= y1, f"({x:.3g}, {y:.3g}) outside the axes"
    assert max(y for _, y in tensor) == pytest.approx(H100.peak_flop_per_s["tensor_fp16"])
    assert _by_gid(fig, "baselines").get_offsets().tolist() == [list(gemm.baseline)]
    assert _by_gid(fig, "roof:fp32:dram") is not None


def test_the_zero_flop_copy_is_drawn_at_its_percent_of_the_bandwidth_roof(fallen):
    fig, _ = fallen
    strip = _by_gid(fig, "no-flops")
    assert strip is not fig.axes[0] and strip.get_title() == STRIP_TITLE
    percent = 100 * COPY_BYTES / H100.bandwidth_byte_per_s["dram"] / COPY_TIME
    offsets = _by_gid(fig, "no-flops:kernels").get_offsets()
    assert offsets[:, 1].tolist() == pytest.approx([percent])
    lo, hi = strip.get_ylim()
    assert lo <= percent <= hi and hi >= 100.0
    assert _by_gid(fig, "no-flops:label:copy").get_text() == f"copy {percent:.0f}%"
    main = _by_gid(fig, "kernels").get_offsets()
    assert len(main) == 1, "the copy is not on the FLOP/s axes (zero has no place on a log scale)"


def test_check_draws_the_fallen_gemm_and_the_copy_in_its_chart(tmp_path):
    db = f"sqlite:///{tmp_path / 'history.db'}"
    start = datetime(2026, 11, 1, tzinfo=UTC)
    common = ["--repo", "acme/kernels", "--device", "H100-SXM5", "--db", db, "--format", "json"]
    for night in range(3):
        path = tmp_path / f"n{night}.json"
        path.write_text(
            _run("tensor_fp16", FP16_TIME, start + timedelta(days=night)).model_dump_json()
        )
        args = ["check", str(path), *common, "--commit", f"c{night}", "--kind", "nightly"]
        assert run([*args, "--branch", "main", "--output", str(tmp_path / "v.json")]) == 0
    pr = tmp_path / "pr.json"
    pr.write_text(_run("fp32", FP32_TIME, start + timedelta(days=4)).model_dump_json())
    charts = tmp_path / "charts"
    args = ["check", str(pr), *common, "--commit", "f00d", "--pr", "7", "--charts", str(charts)]
    run([*args, "--output", str(tmp_path / "pr.json.out")])
    svg = (charts / "roofline.svg").read_text()
    ids = set(re.findall(r'id="([^"]*)"', svg))
    assert {"roof:tensor_fp16:dram", "roof:fp32:dram", "baselines", "arrow:gemm"} <= ids
    assert {"no-flops:kernels", "no-flops:label:copy"} <= ids
