"""A kernel faster off its baseline's binding: each figure at its own roof, no change in percent.

The PR that restores the fusion main broke (memory-bound at 79% of dram, 309 ms, then
compute-bound at 70.8% of fp32, 72 ms) read "1.4% of dram (70.8% of fp32)" and a change of
−69.6 pts: a fall, for a kernel 4.3× faster.
"""

from __future__ import annotations

from verdict_factory import make_kernel, make_verdict

from service.render.bindings import across_roofs, moved_from, rebound
from service.render.markdown import render_verdict
from service.render.text import render_verdict_text


def _restored(like_for_like: float):
    """The restored kernel's row; ``like_for_like``: its percent of the dram roof."""
    kernel = make_kernel(
        "gemm_fused",
        pct=70.8,
        regime="compute-bound",
        binding="fp32",
        center=79.4,
        status="improved",
    )
    base = kernel.baseline
    assert base is not None
    base = base.model_copy(update={"binding": "dram", "time_s": 0.309, "relative_change": None})
    return kernel.model_copy(
        update={"baseline": base, "time_s": 0.0724, "percent_of_baseline_roof": like_for_like}
    )


def test_a_restored_fusion_reads_at_its_own_roofs() -> None:
    kernel = _restored(like_for_like=70.8)
    assert (moved_from(kernel), rebound(kernel), across_roofs(kernel)) == ("dram", None, True)
    comment = render_verdict(make_verdict([kernel], []))
    (row,) = [line for line in comment.splitlines() if "`gemm_fused`" in line]
    cells = [cell.strip() for cell in row.split("|")]
    assert cells[4:10] == [
        "309 → 72.4 ms (0.23×)",
        "compute (dram → fp32)",
        "0.5 FLOP/B (dram)",
        "70.8%",
        "79.4% ±0.8 (n=14)",
        "—",
    ]
    text = render_verdict_text(make_verdict([kernel], []))
    assert "79.4% of dram → 70.8% of fp32" in text


def test_a_kernel_slower_off_its_binding_is_still_shown_like_for_like() -> None:
    kernel = _restored(like_for_like=3.4)
    assert (rebound(kernel), across_roofs(kernel)) == ("dram", False)
    comment = render_verdict(make_verdict([kernel], []))
    assert "3.4% of dram (70.8% of fp32)" in comment
    assert "−76.0 pts" in comment
