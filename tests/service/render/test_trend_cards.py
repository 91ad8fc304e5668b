"""The every-card trend chart: each card's line, and its level in the legend."""

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
    level = float(h100.rsplit("level ", 1)[1].rstrip("%)"))
    assert abs(level - 56.0) < 0.5, h100
    assert abs(level_now(pd.Series(steady)) - 80.0) < 0.3


def test_a_card_of_a_few_nights_reads_their_median() -> None:
    assert level_now(pd.Series([50.0, 52.0, 51.0])) == 51.0


def test_the_legend_names_the_level_not_the_newest_night() -> None:
    """Its newest night at 33.7% read "now 38.9%": the level the gate holds until it confirms."""
    series = pd.concat(
        [
            _nights("A100-SXM4-80GB", [40.0, 40.2, 39.9, 40.1]),
            _nights("H100-SXM5", [39.0, 38.9, 39.2, 38.5, 33.7], start=4),
        ]
    )
    fig = cards_trend_chart(series, title="decode_gemv")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "H100-SXM5 (5 nights, level 38.9%)" in labels, labels
    assert not any("now" in label for label in labels), labels
