"""A roofline label moved away from its point is tied to it by a leader line.

Kernels of one intensity push each other's names up and down the column: a name landed near
7e14 FLOP/s while its point sat at 1.45e14, with nothing to say whose it was.
"""

from __future__ import annotations

import math

from matplotlib.text import Annotation

from rules.roofline import Roof
from service.render.chart_bytes import figure_bytes
from service.render.charts import KernelPoint, roofline_chart

H100 = Roof("H100-SXM5", "datasheet", {"tensor_bf16": 989e12}, {"dram": 3.35e12})
NAMES = [
    'gemm_bf16<64, 4096, 4096, "a&b">(int*, const char*)',
    "kern<script>alert(1)</script>",
    "attn<img src=x onerror=alert(2)>&amp;",
    "md_**bold**_[link](http://evil.example)|pipe|`tick`",
    "cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_nn_align8>",
]


def _labels(fig) -> list[Annotation]:
    ax = fig.axes[0]
    return [t for t in ax.texts if (t.get_gid() or "").startswith("label:")]


def _gap(label: Annotation, radius: float) -> float:
    """Points from the marker's edge to the label's anchor (its offset, in points)."""
    return max(abs(float(v)) for v in label.xyann) - radius


def test_labels_of_kernels_at_one_intensity_far_from_their_points_have_a_leader_line() -> None:
    """Five GEMMs of one shape stack their names: the far ones are tied to their points."""
    kernels = [
        KernelPoint(name, 60.2, flops, 0.2, "tensor_bf16")
        for name, flops in zip(NAMES, (1.8e14, 1.45e14, 1.6e14, 1.5e14, 1.7e14), strict=True)
    ]
    fig = roofline_chart(H100, kernels)
    svg = figure_bytes(fig, "svg").decode()
    labels = _labels(fig)
    assert len(labels) == len(NAMES)
    radius = math.sqrt(20.0 + 380.0 * math.sqrt(0.2)) / 2
    far = [label for label in labels if _gap(label, radius) > 12.0]
    near = [label for label in labels if _gap(label, radius) < 9.0]
    assert far, "five names at one point: some are pushed away"
    for label in far:
        assert label.arrow_patch is not None, f"{label.get_text()} has no leader line"
        assert label.arrow_patch.get_arrowstyle().__class__.__name__ == "Curve"  # a line, no head
    for label in near:
        assert label.arrow_patch is None, f"{label.get_text()} is beside its point"
    assert svg.count('style="fill: none; stroke: #999999; stroke-width: 0.5') >= len(far)


def test_a_label_beside_its_point_has_no_leader_line() -> None:
    fig = roofline_chart(H100, [KernelPoint("gemv", 0.5, 1.0e12, 0.5, "tensor_bf16")])
    [label] = _labels(fig)
    assert label.arrow_patch is None
