"""A roofline chart of thousands of kernels draws every point and names a few dozen.

Before, a 2,000-kernel run's chart (``check --charts``, ``plot run``, the compare page) drew
2,000 names over one another and an arrow for every kernel that moved by noise: a 3.6 MB SVG
in 15 s. Now the flagged kernels and the longest are named, clear of the other points.
"""

from __future__ import annotations

import random

import numpy as np
from matplotlib.text import Text

from rules.roofline import Roof
from service.render.chart_bytes import figure_bytes
from service.render.chart_focus import MAX_NAMED, named_kernels
from service.render.charts import KernelPoint, roofline_chart

ROOF = Roof("H100-SXM5", "datasheet", {"tensor_bf16": 989e12}, {"dram": 3.35e12})


def _fleet(count: int, flagged: int) -> list[KernelPoint]:
    """``count`` GEMMs under the roof, each moved from a baseline; kernel ``flagged`` flagged."""
    rng = random.Random(5)
    points = []
    for i in range(count):
        intensity = 10 ** rng.uniform(0.5, 3)
        achieved = min(3.35e12 * intensity, 989e12) * rng.uniform(0.3, 0.9)
        share = 1e-5 if i == flagged else rng.uniform(1e-4, 1e-3)
        baseline = (intensity, achieved * 1.05)  # 5% faster: every one would get an arrow
        points.append(
            KernelPoint(f"k{i}", intensity, achieved, share, "tensor_bf16", baseline=baseline)
        )
    return [p if i != flagged else _flag(p) for i, p in enumerate(points)]


def _flag(point: KernelPoint) -> KernelPoint:
    return KernelPoint(**{**point.__dict__, "flagged": True})


def _gids(ax, prefix: str) -> list[str]:
    return [a.get_gid() for a in ax.get_children() if (a.get_gid() or "").startswith(prefix)]


def test_a_chart_of_thousands_draws_every_point_and_names_the_flagged_first():
    kernels = _fleet(2000, flagged=7)
    ax = roofline_chart(ROOF, kernels).axes[0]
    scatters = [a for a in ax.get_children() if (a.get_gid() or "").startswith("kernels")]
    assert sum(len(s.get_offsets()) for s in scatters) == 2000
    [named] = [s for s in scatters if s.get_gid() == "kernels"]
    assert len(named.get_offsets()) == MAX_NAMED
    labels = _gids(ax, "label:")
    assert 0 < len(labels) <= MAX_NAMED
    assert "label:k7" in labels, "the flagged kernel is named though its share is the least"
    assert len(_gids(ax, "arrow:")) <= MAX_NAMED
    [note] = [t for t in ax.texts if t.get_gid() == "named"]
    assert note.get_text().startswith("2,000 kernels: the flagged and the longest are named")


def test_a_large_chart_names_only_where_it_does_not_cover_a_point():
    kernels = _fleet(400, flagged=0)
    fig = roofline_chart(ROOF, kernels)
    ax = fig.axes[0]
    svg = figure_bytes(fig, "svg")
    assert svg.count(b'id="label:') == len(_gids(ax, "label:"))
    fig.draw_without_rendering()  # the names measured as drawn at the figure's dpi
    # The points not named share a marker per area: an SVG defines each once.
    assert svg.count(b"<use ") >= 400 - MAX_NAMED and len(svg) < 200_000
    markers = ax.transData.transform([(k.intensity, k.achieved_flop_per_s) for k in kernels])
    for text in (t for t in ax.texts if (t.get_gid() or "").startswith("label:k")):
        if text.get_gid() == "label:k0":
            continue  # the flagged kernel is named wherever it is
        # The name's own box, in display pixels as the markers' centres: an annotation's
        # extent takes in its leader line too, which runs to its point.
        box = Text.get_window_extent(text)
        inside = (
            (markers[:, 0] > box.x0)
            & (markers[:, 0] < box.x1)
            & (markers[:, 1] > box.y0)
            & (markers[:, 1] < box.y1)
        )
        assert not inside.any(), f"{text.get_text()} covers a kernel's point"


def test_small_charts_name_every_kernel_without_a_note():
    kernels = _fleet(12, flagged=3)
    ax = roofline_chart(ROOF, kernels).axes[0]
    assert len(_gids(ax, "label:")) == 12
    assert len(_gids(ax, "arrow:")) == 12
    assert not [t for t in ax.texts if t.get_gid() == "named"]


def test_named_kernels_rank_the_flagged_then_the_time_share():
    flagged = [False, True, False, False]
    shares = [0.5, 0.01, 0.3, 0.2]
    assert named_kernels(flagged, shares, limit=2) == {1, 0}
    assert named_kernels(flagged, shares, limit=3) == {1, 0, 2}
    assert named_kernels([], [], limit=3) == frozenset()
    np.testing.assert_equal(len(named_kernels([False] * 50, [0.02] * 50)), MAX_NAMED)
