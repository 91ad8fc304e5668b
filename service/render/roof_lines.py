"""The roofs of the roofline chart: which precisions to draw, the axes' span, the polylines.

The axes span every roof drawn and every point, current and baseline: a GEMM that fell from
the tensor roof to fp32 is drawn under both roofs, its baseline point high on the tensor roof.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from matplotlib.axes import Axes
from matplotlib.ticker import LogFormatter

from rules import Roof

PRECISION_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2")
_TIER_STYLES = {"dram": "-", "l2": "--", "l1": ":"}
#: Margin around the outermost roof or point, in decades of the log axes.
_MARGIN_DECADES = 0.5
_SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


class PowerOfTenFormatter(LogFormatter):
    """Log-axis tick labels as plain text: ``10³``, ``2×10⁻¹``.

    matplotlib's default writes mathtext (``$10^{3}$``) and parses each label again at every
    draw (its cache holds 50): a third of a roofline chart's drawing, which the digest does
    once a card. Which ticks get a label is the default's rule (``LogFormatter``).
    """

    def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
        exponent = math.floor(math.log10(x) + 1e-9)  # 1e3 is 10³, never 10×10²
        coefficient = round(x / 10.0**exponent)
        power = "10" + str(exponent).translate(_SUPERSCRIPTS)
        return power if coefficient == 1 else f"{coefficient}×{power}"


def log_axes(ax: Axes) -> None:
    """Both axes logarithmic, their tick labels plain text (``PowerOfTenFormatter``)."""
    for axis, scale in ((ax.xaxis, ax.set_xscale), (ax.yaxis, ax.set_yscale)):
        scale("log")
        axis.set_major_formatter(PowerOfTenFormatter(labelOnlyBase=False))
        axis.set_minor_formatter(PowerOfTenFormatter(labelOnlyBase=False))


def roof_vertices(
    peak: float, bandwidth: float, x_range: tuple[float, float]
) -> list[tuple[float, float]]:
    """Vertices of ``min(peak, I * bandwidth)`` over ``x_range`` (the ridge is the knee)."""
    lo, hi = x_range
    ridge = peak / bandwidth
    points = [(lo, min(peak, lo * bandwidth))]
    if lo < ridge < hi:
        points.append((ridge, peak))
    points.append((hi, min(peak, hi * bandwidth)))
    return points


def used_precisions(wanted: Iterable[str | None], roof: Roof) -> list[str]:
    """The precisions to draw a roof for (highest peak first): those the points name.

    ``wanted`` holds the precisions of the current points and of their baselines, so the roof a
    kernel used to reach stays on the chart beside the one it reaches now.
    """
    used = {p for p in wanted if p and p in roof.peak_flop_per_s}
    if not used and roof.peak_flop_per_s:  # nothing known: the highest peak frames the chart
        used = {max(roof.peak_flop_per_s, key=lambda p: roof.peak_flop_per_s[p])}
    return sorted(used, key=lambda p: -roof.peak_flop_per_s[p])


def _decades(values: Sequence[float]) -> tuple[float, float]:
    lo, hi = min(values), max(values)
    return (
        10 ** math.floor(math.log10(lo) - _MARGIN_DECADES),
        10 ** math.ceil(math.log10(hi) + _MARGIN_DECADES),
    )


def x_span(
    roof: Roof, xs: Sequence[float], precisions: Sequence[str], tiers: Sequence[str]
) -> tuple[float, float]:
    """Intensities from below the leftmost point or ridge to beyond the rightmost."""
    ridges = [
        roof.peak_flop_per_s[p] / roof.bandwidth_byte_per_s[t] for p in precisions for t in tiers
    ]
    return _decades([*xs, *ridges])


def y_span(
    roof: Roof,
    ys: Sequence[float],
    precisions: Sequence[str],
    tiers: Sequence[str],
    x_range: tuple[float, float],
) -> tuple[float, float]:
    """FLOP/s from below the lowest roof or point to above the highest peak or point."""
    lo = x_range[0]
    floors = [
        min(roof.peak_flop_per_s[p], lo * roof.bandwidth_byte_per_s[t])
        for p in precisions
        for t in tiers
    ]
    peaks = [roof.peak_flop_per_s[p] for p in precisions]
    lowest, highest = min([*floors, *ys]), max([*peaks, *ys])
    return 10 ** math.floor(math.log10(lowest)), 10 ** math.ceil(math.log10(highest) + 0.2)


def draw_roofs(
    ax: Axes,
    roof: Roof,
    precisions: Sequence[str],
    tiers: Sequence[str],
    x_range: tuple[float, float],
) -> None:
    """One polyline per precision and tier (``roof:<precision>:<tier>``) and its ridge mark."""
    for i, precision in enumerate(precisions):
        colour = PRECISION_COLOURS[i % len(PRECISION_COLOURS)]
        peak = roof.peak_flop_per_s[precision]
        for tier in tiers:
            bandwidth = roof.bandwidth_byte_per_s[tier]
            xs, ys = zip(*roof_vertices(peak, bandwidth, x_range), strict=True)
            (line,) = ax.plot(
                xs,
                ys,
                _TIER_STYLES.get(tier, "-."),
                color=colour,
                linewidth=1.2,
                label=f"{precision} / {tier}",
            )
            line.set_gid(f"roof:{precision}:{tier}")
            ridge = peak / bandwidth
            (mark,) = ax.plot([ridge], [peak], "o", color=colour, markersize=4, fillstyle="none")
            mark.set_gid(f"ridge:{precision}:{tier}")
