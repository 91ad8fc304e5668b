"""Roofline and trend charts (matplotlib, headless Agg backend), saved as SVG or PNG.

Every artist a reader (or a test) may want to find carries a ``gid``: ``roof:<precision>:<tier>``
for roof polylines, ``ridge:<precision>:<tier>`` for ridge markers, ``kernels`` for the kernel
scatter, ``arrow:<name>`` for baseline-to-current arrows, ``label:<name>`` for kernel labels,
``series`` / ``change:<i>`` / ``baseline-band`` / ``baseline-median`` for the trend chart.
"""

from __future__ import annotations

import io
import logging
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import matplotlib

matplotlib.use("Agg")  # headless: CI runners and the service have no display

import numpy as np
import numpy.typing as npt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from collectors.schema import RunRecord
from rules import Placement, Roof
from rules.stats import Modes
from service.render.labels import place_labels, short_names
from service.render.trend_parts import draw_modes, trend_values

_log = logging.getLogger(__name__)

ImageFormat = Literal["svg", "png"]
_PRECISION_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2")
_TIER_STYLES = {"dram": "-", "l2": "--", "l1": ":"}
_MARKER_AREA = (20.0, 400.0)  # points^2 for time share 0 and 1
#: Relative move in intensity or FLOP/s below which no baseline arrow is drawn (unchanged).
ARROW_MIN_CHANGE = 0.01


@dataclass(frozen=True)
class KernelPoint:
    """One kernel on the roofline chart.

    Attributes:
        name: Label shown next to the point.
        intensity: Arithmetic intensity at the chart's tier, FLOP/byte.
        achieved_flop_per_s: Total FLOPs over measured time.
        time_share: The kernel's share of the run's kernel time, 0..1 (sets the marker size).
        precision: The precision whose roof the kernel is judged against (None: any).
        baseline: (intensity, achieved FLOP/s) of the baseline, drawn as an arrow to the point.
    """

    name: str
    intensity: float
    achieved_flop_per_s: float
    time_share: float = 0.0
    precision: str | None = None
    baseline: tuple[float, float] | None = None

    @classmethod
    def from_placement(
        cls,
        name: str,
        placement: Placement,
        *,
        time_share: float = 0.0,
        baseline: Placement | None = None,
        tier: str = "dram",
    ) -> KernelPoint | None:
        """The point of a placed kernel, or None when it cannot be drawn (no time or bytes)."""
        current = _xy(placement, tier)
        if current is None:
            return None
        base = _xy(baseline, tier) if baseline is not None else None
        precision = placement.compute.binding or _largest_term(placement)
        return cls(name, current[0], current[1], time_share, precision, base)


def _largest_term(placement: Placement) -> str | None:
    terms = placement.compute.terms
    return max(terms, key=lambda k: terms[k]) if terms else None


def _xy(placement: Placement, tier: str) -> tuple[float, float] | None:
    intensity = placement.intensity.get(tier)
    achieved = placement.achieved_flop_per_s
    if intensity is None or not achieved or not math.isfinite(intensity) or intensity <= 0:
        return None
    return intensity, achieved


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


def _used(kernels: Sequence[KernelPoint], roof: Roof) -> list[str]:
    used = {k.precision for k in kernels if k.precision and k.precision in roof.peak_flop_per_s}
    if not used and roof.peak_flop_per_s:  # nothing known: the highest peak frames the chart
        used = {max(roof.peak_flop_per_s, key=lambda p: roof.peak_flop_per_s[p])}
    return sorted(used, key=lambda p: -roof.peak_flop_per_s[p])


def _x_range(
    roof: Roof, kernels: Sequence[KernelPoint], precisions: Sequence[str], tiers: Sequence[str]
) -> tuple[float, float]:
    xs = [k.intensity for k in kernels] + [
        b[0] for k in kernels if k.baseline for b in [k.baseline]
    ]
    xs += [
        roof.peak_flop_per_s[p] / roof.bandwidth_byte_per_s[t] for p in precisions for t in tiers
    ]
    lo, hi = min(xs), max(xs)
    return 10 ** math.floor(math.log10(lo) - 0.5), 10 ** math.ceil(math.log10(hi) + 0.5)


def _draw_roofs(
    ax: Axes,
    roof: Roof,
    precisions: Sequence[str],
    tiers: Sequence[str],
    x_range: tuple[float, float],
) -> None:
    for i, precision in enumerate(precisions):
        colour = _PRECISION_COLOURS[i % len(_PRECISION_COLOURS)]
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


def _marker_sizes(kernels: Sequence[KernelPoint]) -> npt.NDArray[np.float64]:
    shares = np.clip(np.array([k.time_share for k in kernels], dtype=float), 0.0, 1.0)
    lo, hi = _MARKER_AREA
    sizes: npt.NDArray[np.float64] = lo + (hi - lo) * np.sqrt(shares)
    return sizes


def _moved(before: tuple[float, float], after: tuple[float, float]) -> bool:
    """Whether a kernel moved by more than ``ARROW_MIN_CHANGE`` in either coordinate."""
    return any(abs(a / b - 1.0) > ARROW_MIN_CHANGE for a, b in zip(after, before, strict=True) if b)


def _draw_kernels(ax: Axes, kernels: Sequence[KernelPoint]) -> None:
    xs = [k.intensity for k in kernels]
    ys = [k.achieved_flop_per_s for k in kernels]
    scatter = ax.scatter(xs, ys, s=_marker_sizes(kernels), color="#333333", alpha=0.75, zorder=3)
    scatter.set_gid("kernels")
    for k in kernels:
        if k.baseline is None or not _moved(k.baseline, (k.intensity, k.achieved_flop_per_s)):
            continue
        arrow = ax.annotate(
            "",
            xy=(k.intensity, k.achieved_flop_per_s),
            xytext=k.baseline,
            arrowprops={"arrowstyle": "->", "color": "#ff7f0e", "lw": 1.2},
            zorder=2,
        )
        arrow.set_gid(f"arrow:{k.name}")
        if arrow.arrow_patch is not None:  # the patch is what an SVG shows
            arrow.arrow_patch.set_gid(f"arrow:{k.name}")


def roofline_chart(
    roof: Roof,
    kernels: Sequence[KernelPoint],
    *,
    tiers: Sequence[str] | None = None,
    title: str | None = None,
) -> Figure:
    """The roofline chart of a run: log-log roofs, ridge points, kernels and arrows.

    Args:
        roof: The roof to draw; one polyline per precision the kernels use and per tier.
        kernels: The kernels; marker area grows with ``time_share``.
        tiers: Memory tiers to draw (default: every tier of the roof, outermost first).
        title: Chart title (default: the roof's label).
    """
    drawn_tiers = [
        t for t in (tiers or roof.bandwidth_byte_per_s) if t in roof.bandwidth_byte_per_s
    ]
    precisions = _used(kernels, roof)
    fig = Figure(figsize=(8, 5.5), layout="constrained")
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    if precisions and drawn_tiers:
        x_range = _x_range(roof, kernels, precisions, drawn_tiers)
        _draw_roofs(ax, roof, precisions, drawn_tiers, x_range)
        ax.set_xlim(*x_range)
    if kernels:
        _draw_kernels(ax, kernels)
        _label_kernels(ax, fig, kernels)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("achieved FLOP/s")
    ax.set_title(title or roof.label, parse_math=False)
    ax.grid(True, which="major", alpha=0.3)
    if precisions and drawn_tiers:
        ax.legend(loc="lower right", fontsize="small")
    return fig


def _label_kernels(ax: Axes, fig: Figure, kernels: Sequence[KernelPoint]) -> None:
    fig.canvas.draw()  # fixes the axes limits so data -> pixel transforms are final
    pixels = ax.transData.transform([(k.intensity, k.achieved_flop_per_s) for k in kernels])
    anchors = pixels * 72.0 / fig.dpi
    order = np.argsort([-k.time_share for k in kernels], kind="stable")
    short = short_names([k.name for k in kernels])  # CUTLASS names would run off the figure
    names = [short[kernels[i].name] for i in order]
    radii = np.sqrt(_marker_sizes(kernels)[order]) / 2
    box = ax.get_window_extent()
    bounds = (box.x0, box.y0, box.x1, box.y1)
    offsets = place_labels(
        anchors[order], names, fontsize=8.0, radii=list(radii), bounds=_points(bounds, fig.dpi)
    )
    for name, (i, offset) in zip(names, zip(order, offsets, strict=True), strict=True):
        k = kernels[i]
        text = ax.annotate(
            name,
            xy=(k.intensity, k.achieved_flop_per_s),
            xytext=offset,
            textcoords="offset points",
            fontsize=8,
            va="center",
            ha="left" if offset[0] >= 0 else "right",
            parse_math=False,  # names are data: `$x$` in a name is not math text
        )
        text.set_gid(f"label:{k.name}")


def _points(
    box: tuple[float, float, float, float], dpi: float
) -> tuple[float, float, float, float]:
    """A pixel box in points, the unit labels are placed in."""
    x0, y0, x1, y1 = (v * 72.0 / dpi for v in box)
    return x0, y0, x1, y1


def trend_chart(
    series: pd.DataFrame,
    *,
    title: str,
    change_points: pd.DataFrame | None = None,
    baseline: tuple[float, float] | None = None,
    metric: str = "percent_of_roof",
    modes: Modes | None = None,
) -> Figure:
    """Percent of roof (or time) over time for one kernel on one device.

    Only nightly runs make the line: when ``series`` has a ``kind`` column, PR and local runs
    are drawn apart as open markers (gid ``other-runs``), so one PR does not bend the trend.

    Args:
        series: Columns ``timestamp`` and ``metric`` (and ``commit``, ``kind``), oldest first.
        title: Chart title, e.g. the kernel key and device.
        change_points: Columns ``since`` (timestamp of the first night at the new level) and
            ``to_commit``; each is drawn as a vertical line labelled with the short commit.
        baseline: (median, spread) in ``metric``'s unit: the band ``median ± spread`` is shaded.
        metric: ``percent_of_roof`` or ``time_s`` (drawn in ms, µs ... as fits).
        modes: A two-level kernel's modes (``rules.two_modes``), in ``metric``'s unit: each
            mode's band is shaded (gids ``mode-low``, ``mode-high``).
    """
    values, unit, scale = trend_values(series, metric)
    fig = Figure(figsize=(8, 3.2), layout="constrained")
    ax = fig.add_subplot()
    times = pd.to_datetime(series["timestamp"], utc=True).dt.tz_localize(None)
    nightly = (series["kind"] == "nightly").to_numpy() if "kind" in series else None
    _draw_series(ax, times, values / scale, nightly)
    if baseline is not None:
        median, spread = baseline[0] / scale, baseline[1] / scale
        band = ax.axhspan(median - spread, median + spread, color="#2ca02c", alpha=0.15)
        band.set_gid("baseline-band")
        ax.axhline(median, color="#2ca02c", linewidth=0.8).set_gid("baseline-median")
    if modes is not None:
        draw_modes(ax, modes, scale)
    if change_points is not None:
        _draw_changes(ax, change_points)
    ax.set_ylabel("% of roof" if metric == "percent_of_roof" else f"time ({unit})")
    ax.set_title(title, fontsize=10, parse_math=False)
    ax.grid(True, alpha=0.3)
    fig.autofmt_xdate()
    return fig


def _draw_series(
    ax: Axes, times: pd.Series, values: pd.Series, nightly: npt.NDArray[np.bool_] | None
) -> None:
    """The nightly line, and other runs (PRs) as open markers off it."""
    on_line = nightly if nightly is not None else np.ones(len(values), dtype=bool)
    (line,) = ax.plot(times[on_line], values[on_line], "-o", markersize=2.5, linewidth=1.2)
    line.set_gid("series")
    if nightly is None or nightly.all():
        return
    others = ax.scatter(
        times[~nightly],
        values[~nightly],
        marker="D",
        facecolors="none",
        edgecolors="#ff7f0e",
        label="PR / local runs",
        zorder=3,
    )
    others.set_gid("other-runs")
    ax.legend(loc="best", fontsize="small")


def _draw_changes(ax: Axes, changes: pd.DataFrame) -> None:
    """A dashed line per change point, labelled with the first commit at the new level."""
    for i, row in enumerate(changes.itertuples()):  # a few change points per kernel
        when = _naive_utc(row.since)
        ax.axvline(
            when,  # type: ignore[arg-type]  # matplotlib's date converter takes Timestamps
            color="#d62728",
            linewidth=1.0,
            linestyle="--",
        ).set_gid(f"change:{i}")
        ax.annotate(
            str(row.to_commit)[:8],
            xy=(when, 1.0),
            xycoords=("data", "axes fraction"),
            rotation=90,
            fontsize=7,
            va="top",
            ha="right",
            parse_math=False,
        )


def _naive_utc(value: object) -> pd.Timestamp:
    stamp = pd.Timestamp(value)  # type: ignore[arg-type]
    return stamp.tz_convert(None) if stamp.tzinfo is not None else stamp


def figure_bytes(fig: Figure, fmt: ImageFormat = "svg", *, dpi: int = 110) -> bytes:
    """The figure encoded as SVG or PNG (deterministic SVG: no dates, fixed ids)."""
    buffer = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    rc = matplotlib.rc_context({"svg.hashsalt": "roofguard", "svg.fonttype": "none"})
    # matplotlib draws (and warns about layout and glyphs) only here; its hints are for a
    # person at a notebook and would litter a CI log, so they go to the debug log instead.
    with rc, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(buffer, format=fmt, dpi=dpi, metadata=metadata)
    for warning in caught:
        _log.debug("matplotlib: %s", warning.message)
    return buffer.getvalue()


def run_points(
    run: RunRecord, placements: Mapping[str, Placement], baseline: Mapping[str, Placement]
) -> list[KernelPoint]:
    """The run's kernels as chart points (time share of the run, arrow from the baseline)."""
    total = sum(k.duration_s for k in run.kernels) or 1.0
    points = [
        KernelPoint.from_placement(
            k.key, placements[k.key], time_share=k.duration_s / total, baseline=baseline.get(k.key)
        )
        for k in run.kernels
    ]
    return [p for p in points if p is not None]
