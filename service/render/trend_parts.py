"""Parts of a trend chart: the values in the unit that reads best, and a two-level kernel's modes.

A kernel on a runner with two clock or memory states alternates between two levels
(``rules.two_modes``); the chart shades each mode's band (its level ± ``MODE_BAND`` within-mode
spreads), so a reader sees a night at the other mode as the runner's, not a drop.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.axes import Axes

from rules.stats import Modes

#: What a trend chart can show: column, axis label, and the scale of the unit that reads best.
TREND_METRICS = ("percent_of_roof", "time_s")
#: Half-height of a mode's band, in within-mode spreads (two: most of the mode's nights).
MODE_BAND = 2.0


def trend_values(series: pd.DataFrame, metric: str) -> tuple[pd.Series, str, float]:
    """The values of ``metric``, and the unit and scale they are drawn in."""
    if metric not in TREND_METRICS:
        raise ValueError(f"metric must be one of {TREND_METRICS}, not {metric!r}")
    values = pd.to_numeric(series[metric], errors="coerce")
    unit, scale = _time_unit(values) if metric == "time_s" else ("%", 1.0)
    return values, unit, scale


def _time_unit(values: pd.Series) -> tuple[str, float]:
    typical = float(values.abs().median()) if len(values) else 1.0
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if typical >= scale:
            return unit, scale
    return "ns", 1e-9


def draw_modes(ax: Axes, modes: Modes, scale: float) -> None:
    """Shade each mode's band (values divided by ``scale``, the unit drawn)."""
    half = MODE_BAND * modes.spread
    for name, level in (("low", modes.low), ("high", modes.high)):
        low, high = (level - half) / scale, (level + half) / scale
        band = ax.axhspan(low, high, color="#9467bd", alpha=0.12)
        band.set_gid(f"mode-{name}")
