"""What a roofline chart says when it has no kernel to place: why, not empty axes.

A run timed alone (pytest-benchmark, Google Benchmark without counters) or profiled without
the roofline metrics places no kernel. Its chart was empty log-log axes under one roof chosen
for no reason (the highest peak), which read as a chart of nothing; ``roofguard plot run``
refuses such a run in these words.
"""

from __future__ import annotations

from matplotlib.figure import Figure

#: Why a run has no roofline chart (``plot run``'s refusal, the run page's note).
NO_PLACED_KERNEL = "no kernel has both time and byte counts to place on the chart"
#: What would place its kernels, said after the reason.
HOW_TO_PLACE = "collect ncu --set roofline or declare a work model to place them on the roofline"


def no_chart_reason(between: str = " ") -> str:
    """The sentence a page shows instead of a roofline chart with no kernel on it.

    ``between``: what parts the reason from what would place the kernels (a chart's line break).
    """
    return f"No roofline chart: {NO_PLACED_KERNEL};{between}{HOW_TO_PLACE}."


def note_chart(title: str) -> Figure:
    """A figure holding ``title`` and ``no_chart_reason`` (gid ``no-chart``), no axes."""
    fig = Figure(figsize=(8, 1.4))
    fig.suptitle(title, parse_math=False)
    text = fig.text(
        0.5, 0.4, no_chart_reason("\n"), ha="center", va="center", fontsize=9, parse_math=False
    )
    text.set_gid("no-chart")
    return fig
