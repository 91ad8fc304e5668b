"""The zero-FLOP strip: names kept apart, and a run of copies alone gets the strip alone.

A real nvbench file of 44 copy benchmarks within 15% of each other (the corpus's
``NVIDIA_nvbench__python_scripts_test_ref.json``) had its names piled into one unreadable
block, beside empty FLOP/s axes framed by a roof none of them used.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text

from rules.hardware import builtin_catalog
from service.render.charts import KernelPoint, roofline_chart
from service.render.no_flops import STRIP_TITLE, column_heights

H100 = builtin_catalog().lookup("H100-SXM5").roof()


def _copies(n: int, flops_kernel: bool = False) -> list[KernelPoint]:
    rng = np.random.default_rng(3)
    copies = [
        KernelPoint(
            name=f"copy_type_conversion_sweep[In=I{8 << (i % 4)},Out=F{16 << (i % 3)},v{i}]",
            intensity=0.0,
            achieved_flop_per_s=0.0,
            time_share=float(rng.uniform(0.01, 0.05)),
            bandwidth_percent=float(rng.uniform(52.0, 66.0)),
        )
        for i in range(n)
    ]
    gemm = KernelPoint(name="gemm", intensity=300.0, achieved_flop_per_s=4e14, time_share=0.5)
    return [*copies, gemm] if flops_kernel else copies


def _label_boxes(fig):
    canvas = FigureCanvasAgg(fig)  # as the chart is saved
    canvas.draw()
    renderer = canvas.get_renderer()
    return [
        Text.get_window_extent(t, renderer)  # the name, not its leader line
        for t in fig.axes[-1].texts
        if (t.get_gid() or "").startswith("no-flops:label:")
    ]


@pytest.mark.parametrize("with_gemm", [False, True])
def test_the_strips_names_do_not_overlap(with_gemm: bool) -> None:
    fig = roofline_chart(H100, _copies(44, with_gemm))
    boxes = _label_boxes(fig)
    assert len(boxes) >= 20  # as many as fit one a line, most GPU time first
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not a.overlaps(b), "two names of the strip overlap"


def test_copies_alone_get_the_strip_alone_under_the_roofs_name() -> None:
    fig = roofline_chart(H100, _copies(5))
    (strip,) = fig.axes  # no empty FLOP/s axes beside it
    assert strip.get_gid() == "no-flops" and strip.get_title() == STRIP_TITLE
    assert fig.get_suptitle() == H100.label
    assert len(_label_boxes(fig)) == 5


@given(
    st.lists(st.floats(0.0, 500.0), min_size=1, max_size=30),
    st.floats(5.0, 12.0),
)
def test_column_heights_keep_order_gaps_and_bounds(anchors: list[float], gap: float) -> None:
    low, high = 0.0, 500.0
    heights = column_heights(np.array(anchors), gap, low, high)
    order = np.argsort(anchors, kind="stable")
    placed = heights[order]
    assert np.all(np.diff(placed) >= gap - 1e-9)  # apart, in the anchors' order
    if len(anchors) * gap <= high - low:  # they fit: all inside
        assert placed[0] >= low + gap / 2 - 1e-9 and placed[-1] <= high - gap / 2 + 1e-9
