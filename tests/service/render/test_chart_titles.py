"""A trend chart's title fits its image: a template signature ran off both edges."""

from __future__ import annotations

import pandas as pd

from service.render.trend_cards import cards_trend_chart
from service.render.trends import trend_chart

NAME = "void gemv_kernel<__nv_bfloat16, 8192, 4096, 1>(const __nv_bfloat16*, " * 2 + "int)"


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


def test_a_long_kernel_name_is_cut_in_the_middle_and_the_card_kept() -> None:
    for fig in (
        trend_chart(_series(), title=f"{NAME} on H100-SXM5"),
        cards_trend_chart(_series(), title=f"{NAME} on H100-SXM5"),
    ):
        shown = fig.axes[0].get_title()
        assert len(shown) <= fig.get_figwidth() * 72 / 6, shown  # 10 pt, 0.6 em a glyph
        assert shown.startswith("void gemv_kernel<") and shown.endswith("int) on H100-SXM5")
        assert "…" in shown


def test_a_short_title_is_kept_whole() -> None:
    assert trend_chart(_series(), title="k on H100-SXM5").axes[0].get_title() == "k on H100-SXM5"
