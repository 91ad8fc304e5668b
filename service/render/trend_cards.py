"""One kernel's nightly percent of roof on every card it ran on, on one chart.

Percent of roof is each card on its own roofs, so the line carries on across a runner swap:
a GEMV that kept up with its new card stays level while its time falls by the ratio the two
roofs predict; one that did not keep up steps down at the swap. This is the chart only a
roofline tracker can draw: times on two cards do not belong on one axis.

Artists carry a ``gid``: ``series:<card>`` for a card's line, ``card:<i>`` for the vertical
line at each later card's first night and ``card-label:<i>`` for its label. The legend gives
each card's nights and its level (``level_now``, the gate's), not its newest night's value.
"""

from __future__ import annotations

import math

import pandas as pd
from matplotlib.figure import Figure

from rules.stats import current_levels
from service.render.labels import fit_title
from service.render.trends import label_line

#: Rows the chart reads.
CARD_COLUMNS = ("timestamp", "device", "percent_of_roof")


def card_arrivals(series: pd.DataFrame) -> list[tuple[str, pd.Timestamp]]:
    """Each card and its first night, in the order the cards arrived."""
    stamps = pd.to_datetime(series["timestamp"], utc=True)
    first = stamps.groupby(series["device"].astype(str)).min().sort_values(kind="stable")
    return [(str(card), stamp) for card, stamp in first.items()]


def level_now(values: pd.Series) -> float:
    """A card's level now: the gate's, since its last change (the median of too few nights).

    The median of the last 14 nights read 79.8% "now" six nights into a fall to 56%, on
    the chart meant to show it.
    """
    (level,) = current_levels([values.to_numpy(dtype=float)])
    return level.level if math.isfinite(level.level) else float(values.median())


def cards_trend_chart(series: pd.DataFrame, *, title: str) -> Figure:
    """Percent of roof over the nightly runs, a line per card, a marker at each card's arrival.

    Args:
        series: Nightly rows of one kernel, columns ``CARD_COLUMNS`` (several devices).
        title: The chart's title (the kernel).
    """
    placed = series.dropna(subset=["percent_of_roof"])
    fig = Figure(figsize=(8, 3.2), layout="constrained")
    ax = fig.add_subplot()
    arrivals = card_arrivals(placed)
    for card, _ in arrivals:
        rows = placed[placed["device"].astype(str) == card]
        times = pd.to_datetime(rows["timestamp"], utc=True).dt.tz_localize(None)
        values = pd.to_numeric(rows["percent_of_roof"], errors="coerce")
        # "level", not "now": the gate's level lags a fall it has not confirmed yet
        label = f"{card} ({len(rows)} nights, level {level_now(values):.1f}%)"
        (line,) = ax.plot(times, values, "-o", markersize=2.5, linewidth=1.2, label=label)
        line.set_gid(f"series:{card}")
    for i, (card, since) in enumerate(arrivals[1:]):
        gids = (f"card:{i}", f"card-label:{i}")
        label_line(ax, since, f"first night on {card}", gids=gids, top=True, color="#555555")
    ax.set_ylabel("% of roof (each card on its own roofs)", parse_math=False)
    fit_title(ax, title)
    ax.legend(loc="best", fontsize="small")
    ax.grid(True, alpha=0.3)
    fig.autofmt_xdate()
    return fig
