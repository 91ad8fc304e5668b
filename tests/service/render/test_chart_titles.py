"""A trend chart's title fits its image: a template signature ran off both edges.

A guess of 0.6 em a glyph still ran a wide CUTLASS name past the right edge, the card losing
its last letters ("... on H100-SXM"): the title is measured as drawn, against the axes.
"""

from __future__ import annotations

import html

import pandas as pd
import pytest
from matplotlib.figure import Figure

from service.render.chart_bytes import figure_bytes
from service.render.trend_cards import cards_trend_chart
from service.render.trends import trend_chart

NAME = "void gemv_kernel<__nv_bfloat16, 8192, 4096, 1>(const __nv_bfloat16*, " * 2 + "int)"
CUTLASS = "cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_nn_align8>"


def _series() -> pd.DataFrame:
    stamps = pd.date_range("2026-05-01", periods=5, freq="D", tz="UTC")
    return pd.DataFrame(
        {
            "timestamp": stamps,
            "percent_of_roof": [55.0, 55.2, 48.5, 48.4, 48.6],
            "device": "H100-SXM5",
            "kind": "nightly",
        }
    )


def _drawn_title(fig: Figure, dpi: float) -> tuple[str, float, float, float]:
    """The title as drawn at ``dpi``: its text, its left and right edge, the figure's width."""
    fig.set_dpi(dpi)
    fig.draw_without_rendering()  # the title is fitted as the figure is drawn
    title = fig.axes[0].title
    box = title.get_window_extent()
    return title.get_text(), box.x0, box.x1, fig.bbox.width


@pytest.mark.parametrize("chart", [trend_chart, cards_trend_chart])
@pytest.mark.parametrize("name", [NAME, CUTLASS])
def test_a_long_kernel_name_is_cut_and_the_card_kept_whole_within_the_image(
    chart, name: str
) -> None:
    fig = chart(_series(), title=f"{name} on H100-SXM5")
    for dpi in (100, 110, 220):
        shown, left, right, width = _drawn_title(fig, dpi)
        assert left >= 0 and right <= width, f"{shown!r} runs off the image at {dpi} dpi"
        assert shown.startswith(name[:12]) and shown.endswith(f"{name[-5:]} on H100-SXM5")
        assert "…" in shown
    svg = figure_bytes(fig, "svg")  # fitted as the SVG renderer measures it, and written so
    assert html.escape(fig.axes[0].title.get_text(), quote=False).encode() in svg


def test_a_short_title_is_kept_whole() -> None:
    fig = trend_chart(_series(), title="k on H100-SXM5")
    assert _drawn_title(fig, 110)[0] == "k on H100-SXM5"
