"""The every-card trend chart: each card's line, and its level now in the legend."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd

from service.render.trend_cards import cards_trend_chart, level_now


def _nights(card: str, values: list[float], start: int = 0) -> pd.DataFrame:
    first = datetime(2026, 10, 1, 3, tzinfo=UTC)
    stamps = [first + timedelta(days=start + i) for i in range(len(values))]
    return pd.DataFrame({"timestamp": stamps, "device": card, "percent_of_roof": values})


def test_the_legend_says_the_level_since_the_last_change() -> None:
    """Six nights into a fall from 80% to 56%, the last 14 nights' median still read 79.8%."""
    rng = np.random.default_rng(5)
    fell = [80.0 + rng.normal(0, 0.3) for _ in range(15)] + [
        56.0 + rng.normal(0, 0.3) for _ in range(6)
    ]
    steady = [80.0 + rng.normal(0, 0.3) for _ in range(21)]
    series = pd.concat([_nights("H100-SXM5", fell), _nights("A100-SXM4-80GB", steady)])
    fig = cards_trend_chart(series, title="decode_gemm")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    (h100,) = [t for t in labels if t.startswith("H100-SXM5")]
    now = float(h100.rsplit("now ", 1)[1].rstrip("%)"))
    assert abs(now - 56.0) < 0.5, h100
    assert abs(level_now(pd.Series(steady)) - 80.0) < 0.3


def test_a_card_of_a_few_nights_reads_their_median() -> None:
    assert level_now(pd.Series([50.0, 52.0, 51.0])) == 51.0
