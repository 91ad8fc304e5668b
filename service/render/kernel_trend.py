"""One kernel's trend chart on one card, as ``roofguard plot kernel`` and the kernel page draw it.

Both draw the same marks from the same rows: the nightly series (``prepare_history``: nightly
runs of runners that passed their health preflight), its confirmed changes
(``detect_changes``, the digest's scan), the baseline band of the nights before the last
change, the binding changes, the runner swaps, and a two-level kernel's modes. A page that
drew the series alone autoscaled to the noise, so ±1% swings read as drops and a confirmed
regression had no marker or commit.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from rules import binding_changes, reference_binding
from rules.stats import robust_center_spread
from service.digest.build import prepare_history
from service.digest.changes import detect_changes
from service.digest.model import DigestOptions
from service.render.trend_parts import alternating_modes
from service.render.trends import trend_chart, with_runner_marks

#: Nights before a change that make up the baseline band of its trend chart.
BASELINE_NIGHTS = 14


def baseline_band(before: pd.Series) -> tuple[float, float]:
    """(median, spread) of the last ``BASELINE_NIGHTS`` of ``before`` (the nights before)."""
    return robust_center_spread(before.to_numpy(dtype=float)[-BASELINE_NIGHTS:])


def trend_marks(frame: pd.DataFrame, column: str) -> tuple[pd.DataFrame, tuple[float, float]]:
    """The change points of ``frame`` (``prepare_history``'s) and the baseline band.

    The band is that of the nights before the last change (all nights: no change).
    """
    changes, _ = detect_changes(frame, DigestOptions(), value=column)
    last = int(changes["row"].max()) if len(changes) else len(frame)
    return changes, baseline_band(frame[column].iloc[:last])


def kernel_trend(
    nightly: pd.DataFrame,
    *,
    column: str,
    title: str,
    runners: pd.Series,
    others: pd.DataFrame | None = None,
) -> Figure | None:
    """The trend chart of ``column`` over one kernel's ``nightly`` rows on one card.

    Args:
        nightly: The kernel's nightly rows on one card (``kernel_history``, like for like).
        column: ``percent_of_roof`` or ``time_s``.
        title: The chart's title, the kernel and its card (``on <card>`` is kept whole).
        runners: Each nightly row's runner, by row (missing where a run names none).
        others: PR and local rows to draw apart as open markers (None: none).

    Returns:
        None when no nightly row has ``column``.
    """
    frame = prepare_history(nightly, value=column)
    if frame.empty:
        return None
    changes, band = trend_marks(frame, column)
    values = frame[column].to_numpy(dtype=float)
    fig = trend_chart(
        _with_other_runs(frame, others, column),
        title=title,
        change_points=changes,
        baseline=band,
        metric=column,
        bindings=binding_changes(frame),
        reference=reference_binding(list(nightly["reference_binding"])),
        modes=alternating_modes(values) if column == "percent_of_roof" else None,
    )
    return with_runner_marks(fig, runners, nightly["timestamp"])


def _with_other_runs(frame: pd.DataFrame, others: pd.DataFrame | None, column: str) -> pd.DataFrame:
    """The nightly frame plus PR and local runs, drawn apart as open markers off the line."""
    others = others[others[column].notna()] if others is not None else None
    if others is None or others.empty:
        return frame
    extra = others.assign(timestamp=pd.to_datetime(others["timestamp"], utc=True))
    columns = ["timestamp", column, "commit", "kind"]
    both = pd.concat([frame.assign(kind="nightly")[columns], extra[columns]], ignore_index=True)
    return both.sort_values("timestamp", kind="stable").reset_index(drop=True)
