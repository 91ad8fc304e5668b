"""Roofline and trend charts (matplotlib, headless Agg backend), encoded by ``chart_bytes``.

Every artist a reader (or a test) may want to find carries a ``gid``: ``roof:<precision>:<tier>``
for roof polylines, ``ridge:<precision>:<tier>`` for ridge markers, ``kernels`` for the kernel
scatter, ``baselines`` for the baseline points, ``arrow:<name>`` for baseline-to-current arrows,
``label:<name>`` for kernel labels, the zero-FLOP strip's in ``service.render.no_flops``, and the
trend chart's in ``service.render.trends``. The roofs are drawn by ``service.render.roof_lines``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import matplotlib

matplotlib.use("Agg")  # headless: CI runners and the service have no display

import numpy as np
import numpy.typing as npt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from collectors.schema import RunRecord
from rules import KernelStatus, KernelVerdict, Placement, Roof, percent_of_resource
from service.render.chart_focus import named_kernels, named_note
from service.render.chart_note import note_chart
from service.render.labels import LEADER_LINE, displaced, place_labels, point_boxes, short_names
from service.render.no_flops import NoFlopsMark, draw_no_flops
from service.render.roof_lines import draw_roofs, log_axes, used_precisions, x_span, y_span

_MARKER_AREA = (20.0, 400.0)  # points^2 for time share 0 and 1
#: Relative move in intensity or FLOP/s below which no baseline arrow is drawn (unchanged).
ARROW_MIN_CHANGE = 0.01
#: Marker areas (points^2) of the kernels a chart draws but does not name are rounded to
#: this step (``_draw_points``).
UNNAMED_AREA_STEP = 10.0


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
        baseline_precision: The precision whose roof the baseline was bound by, when it differs
            (a GEMM that fell off the tensor cores): that roof is drawn too.
        bandwidth_percent: For a kernel that moves bytes but does no FLOPs (a copy, a memset):
            its percent of the bandwidth roof, drawn on the chart's zero-FLOP strip instead of
            on the log-log axes (where zero FLOP/s has no place).
        flagged: Whether its verdict flags it (regressed or suspect): a chart of more kernels
            than it names names these first (``service.render.chart_focus``).
    """

    name: str
    intensity: float
    achieved_flop_per_s: float
    time_share: float = 0.0
    precision: str | None = None
    baseline: tuple[float, float] | None = None
    baseline_precision: str | None = None
    bandwidth_percent: float | None = None
    flagged: bool = False

    @property
    def on_roof(self) -> bool:
        """Whether the point has FLOPs, so it sits on the log-log axes."""
        return self.bandwidth_percent is None

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
        """The point of a placed kernel, or None when it cannot be drawn (no time or bytes).

        A kernel with bytes and no FLOPs gets its percent of the bandwidth roof instead.
        """
        current = _xy(placement, tier)
        if current is None:
            percent = _bandwidth_percent(placement)
            return (
                None
                if percent is None
                else cls(name, 0.0, 0.0, time_share, None, None, None, percent)
            )
        base = _xy(baseline, tier) if baseline is not None else None
        precision = placement.compute.binding or _largest_term(placement)
        base_precision = baseline.compute.binding if baseline is not None else None
        return cls(name, current[0], current[1], time_share, precision, base, base_precision)


def _bandwidth_percent(placement: Placement) -> float | None:
    """Percent of the binding bandwidth roof of a kernel without FLOPs, else None."""
    if placement.total_flops or not placement.time_s or placement.memory.binding is None:
        return None
    percent = percent_of_resource(placement, placement.memory.binding)
    return percent if percent is not None and math.isfinite(percent) else None


def _largest_term(placement: Placement) -> str | None:
    terms = placement.compute.terms
    return max(terms, key=lambda k: terms[k]) if terms else None


def _xy(placement: Placement, tier: str) -> tuple[float, float] | None:
    intensity = placement.intensity.get(tier)
    achieved = placement.achieved_flop_per_s
    if intensity is None or not achieved or not math.isfinite(intensity + achieved):
        return None  # no time, no bytes, or a stored outlier past a float's range
    return (intensity, achieved) if intensity > 0 else None


def _marker_sizes(kernels: Sequence[KernelPoint]) -> npt.NDArray[np.float64]:
    shares = np.clip(np.array([k.time_share for k in kernels], dtype=float), 0.0, 1.0)
    lo, hi = _MARKER_AREA
    sizes: npt.NDArray[np.float64] = lo + (hi - lo) * np.sqrt(shares)
    return sizes


def _moved(before: tuple[float, float], after: tuple[float, float]) -> bool:
    """Whether a kernel moved by more than ``ARROW_MIN_CHANGE`` in either coordinate."""
    return any(abs(a / b - 1.0) > ARROW_MIN_CHANGE for a, b in zip(after, before, strict=True) if b)


def _scatter(ax: Axes, kernels: Sequence[KernelPoint], sizes: Any, gid: str) -> None:
    xs = [k.intensity for k in kernels]
    ys = [k.achieved_flop_per_s for k in kernels]
    scatter = ax.scatter(xs, ys, s=sizes, color="#333333", alpha=0.75, zorder=3)
    scatter.set_gid(gid)


def _draw_points(ax: Axes, named: Sequence[KernelPoint], others: Sequence[KernelPoint]) -> None:
    """The points of the kernels not named (``kernels:<area>``), then the named (``kernels``).

    The others' marker areas are rounded to ``UNNAMED_AREA_STEP``, one scatter per area:
    an SVG then defines each marker once and places it (``<use>``), where a marker of its own
    for each of 2,000 points took 1.5 MB.
    """
    areas = np.round(_marker_sizes(others) / UNNAMED_AREA_STEP) * UNNAMED_AREA_STEP
    for area in np.unique(areas):
        group = [k for k, a in zip(others, areas, strict=True) if a == area]
        _scatter(ax, group, float(area), f"kernels:{area:.0f}")
    _scatter(ax, named, _marker_sizes(named), "kernels")


def _draw_kernels(ax: Axes, named: Sequence[KernelPoint], others: Sequence[KernelPoint]) -> None:
    """Every kernel's point; the ``named`` ones' arrows from their baselines."""
    _draw_points(ax, named, others)
    moved = [
        k for k in named if k.baseline and _moved(k.baseline, (k.intensity, k.achieved_flop_per_s))
    ]
    if moved:  # hollow: where the kernel was, the arrow's tail
        was = ax.scatter(
            [k.baseline[0] for k in moved if k.baseline],
            [k.baseline[1] for k in moved if k.baseline],
            s=_marker_sizes(moved),
            facecolors="none",
            edgecolors="#ff7f0e",
            zorder=3,
        )
        was.set_gid("baselines")
    for k in moved:
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


def _frame(ax: Axes, roof: Roof, kernels: Sequence[KernelPoint], tiers: Sequence[str]) -> bool:
    """Draw the roofs and fix the axes to span every roof and point; False: no roof drawn."""
    wanted = [k.precision for k in kernels] + [k.baseline_precision for k in kernels]
    precisions = used_precisions(wanted, roof)
    if not precisions or not tiers:
        return False
    bases = [k.baseline for k in kernels if k.baseline]
    xs = [k.intensity for k in kernels] + [b[0] for b in bases]
    ys = [k.achieved_flop_per_s for k in kernels] + [b[1] for b in bases]
    x_range = x_span(roof, xs, precisions, tiers)
    draw_roofs(ax, roof, precisions, tiers, x_range)
    ax.set_xlim(*x_range)
    ax.set_ylim(*y_span(roof, ys, precisions, tiers, x_range))
    return True


def roofline_chart(
    roof: Roof,
    kernels: Sequence[KernelPoint],
    *,
    tiers: Sequence[str] | None = None,
    title: str | None = None,
) -> Figure:
    """The roofline chart of a run: log-log roofs, ridge points, kernels and arrows.

    Kernels without FLOPs (``bandwidth_percent``) go on a strip at the left edge, at their
    percent of the bandwidth roof; the main axes stay ``fig.axes[0]``. When no kernel is on
    the FLOP/s axes, the strip is the whole chart (``_strip_chart``); with no kernel at all,
    a note of why (``chart_note``).

    Args:
        roof: The roof to draw; one polyline per precision the kernels (or their baselines)
            use and per tier.
        kernels: The kernels; marker area grows with ``time_share``.
        tiers: Memory tiers to draw (default: every tier of the roof, outermost first).
        title: Chart title (default: the roof's label).
    """
    if not kernels:  # empty axes under one roof picked for no reason: say why instead
        return note_chart(title or roof.label)
    drawn_tiers = [
        t for t in (tiers or roof.bandwidth_byte_per_s) if t in roof.bandwidth_byte_per_s
    ]
    on_roof = [k for k in kernels if k.on_roof]
    no_flops = [k for k in kernels if not k.on_roof]
    if no_flops and not on_roof:
        return _strip_chart(no_flops, title or roof.label)
    fig = Figure(figsize=(9.5 if no_flops else 8, 5.5), layout="constrained")
    grid = fig.add_gridspec(1, 2, width_ratios=(1.4, 8)) if no_flops else None
    ax = fig.add_subplot(grid[0, 1]) if grid is not None else fig.add_subplot()
    log_axes(ax)
    framed = _frame(ax, roof, on_roof, drawn_tiers)
    named, others = _named(ax, kernels)
    if on_roof:
        on_roof_named = [k for k in named if k.on_roof]
        on_roof_others = [k for k in others if k.on_roof]
        _draw_kernels(ax, on_roof_named, on_roof_others)
        _label_kernels(ax, fig, on_roof_named, on_roof_others)
    if grid is not None:
        marks = [NoFlopsMark(k.name, k.bandwidth_percent or 0.0, k.time_share) for k in no_flops]
        short = short_names([k.name for k in named if not k.on_roof])
        draw_no_flops(fig.add_subplot(grid[0, 0]), marks, short)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("achieved FLOP/s")
    ax.set_title(title or roof.label, parse_math=False)
    ax.grid(True, which="major", alpha=0.3)
    if framed:
        ax.legend(loc="lower right", fontsize="small")
    return fig


def _strip_chart(kernels: Sequence[KernelPoint], title: str) -> Figure:
    """Kernels without FLOPs alone: their strip, not beside empty FLOP/s axes and roofs."""
    fig = Figure(figsize=(8, 5.5), layout="constrained")
    ax = fig.add_subplot()
    named, _ = _named(ax, kernels)
    marks = [NoFlopsMark(k.name, k.bandwidth_percent or 0.0, k.time_share) for k in kernels]
    fig.suptitle(title, parse_math=False)
    draw_no_flops(ax, marks, short_names([k.name for k in named]), wide=True)
    return fig


def _named(ax: Axes, kernels: Sequence[KernelPoint]) -> tuple[list[KernelPoint], list[KernelPoint]]:
    """The kernels the chart names (``chart_focus``) and the others; a note when not all."""
    chosen = named_kernels([k.flagged for k in kernels], [k.time_share for k in kernels])
    if len(chosen) < len(kernels):  # top left: above the bandwidth roof, where none can be
        note = named_note(len(kernels))
        ax.text(0.01, 0.99, note, transform=ax.transAxes, va="top", fontsize="small", gid="named")
    named = [k for i, k in enumerate(kernels) if i in chosen]
    return named, [k for i, k in enumerate(kernels) if i not in chosen]


def _label_kernels(
    ax: Axes, fig: Figure, named: Sequence[KernelPoint], others: Sequence[KernelPoint]
) -> None:
    """Name the ``named`` kernels beside their points, most important first.

    Where the chart draws ``others`` too (it names fewer than it draws), their points are
    obstacles, and a name that finds no free place is left out unless its kernel is flagged.
    """
    fig.canvas.draw()  # fixes the axes limits so data -> pixel transforms are final
    order = sorted(range(len(named)), key=lambda i: (not named[i].flagged, -named[i].time_share))
    ranked = [named[i] for i in order]
    short = short_names([k.name for k in ranked])  # CUTLASS names would run off the figure
    names = [short[k.name] for k in ranked]
    crowded = bool(others)
    box = ax.get_window_extent()
    radii = np.sqrt(_marker_sizes(ranked)) / 2
    offsets = place_labels(
        _anchors(ax, fig, ranked),
        names,
        fontsize=8.0,
        radii=list(radii),
        bounds=_points((box.x0, box.y0, box.x1, box.y1), fig.dpi),
        optional=[crowded and not k.flagged for k in ranked],
        obstacles=point_boxes(_anchors(ax, fig, others), np.sqrt(_marker_sizes(others)) / 2),
    )
    for name, k, offset, radius in zip(names, ranked, offsets, radii, strict=True):
        if offset is not None:
            _annotate(ax, k, name, offset, float(radius))


def _anchors(ax: Axes, fig: Figure, kernels: Sequence[KernelPoint]) -> npt.NDArray[Any]:
    """The kernels' points in display points (the unit labels are placed in)."""
    if not kernels:
        return np.zeros((0, 2))
    xy = [(k.intensity, k.achieved_flop_per_s) for k in kernels]
    return np.asarray(ax.transData.transform(xy), dtype=float) * 72.0 / fig.dpi


def _annotate(
    ax: Axes, kernel: KernelPoint, name: str, offset: tuple[float, float], radius: float
) -> None:
    """``name`` at ``offset`` points from its kernel's point (of ``radius``), a leader if far.

    Kernels of one intensity push each other's names up and down the column: a name off
    the ring beside its marker (``labels.displaced``) read as another point's without a line.
    """
    leader = displaced(offset, radius)
    text = ax.annotate(
        name,
        xy=(kernel.intensity, kernel.achieved_flop_per_s),
        xytext=offset,
        textcoords="offset points",
        fontsize=8,
        va="center",
        ha="left" if offset[0] >= 0 else "right",
        arrowprops=dict(LEADER_LINE, shrinkB=radius) if leader else None,
        parse_math=False,  # names are data: `$x$` in a name is not math text
    )
    text.set_gid(f"label:{kernel.name}")


def _points(
    box: tuple[float, float, float, float], dpi: float
) -> tuple[float, float, float, float]:
    """A pixel box in points, the unit labels are placed in."""
    x0, y0, x1, y1 = (v * 72.0 / dpi for v in box)
    return x0, y0, x1, y1


def run_points(
    run: RunRecord,
    placements: Mapping[str, Placement],
    baseline: Mapping[str, Placement],
    verdict: Sequence[KernelVerdict] = (),
) -> list[KernelPoint]:
    """The run's kernels as chart points (time share of the run, arrow from the baseline).

    A kernel without a baseline placement takes its baseline from its ``verdict`` (the same
    work in the baseline's median time, bound by the baseline's binding precision).
    """
    total = sum(k.duration_s for k in run.kernels) or 1.0
    judged = {k.key: k for k in verdict}
    points = []
    for k in run.kernels:
        point = KernelPoint.from_placement(
            k.key, placements[k.key], time_share=k.duration_s / total, baseline=baseline.get(k.key)
        )
        if point is not None and k.key in judged:
            point = judged_point(point, judged[k.key])
        if point is not None:
            points.append(point)
    return points


def judged_point(point: KernelPoint, kernel: KernelVerdict) -> KernelPoint:
    """``point`` flagged as its verdict flags it, with a baseline where it has none."""
    flagged = kernel.status in (KernelStatus.REGRESSED, KernelStatus.SUSPECT)
    point = replace(point, flagged=flagged)
    return with_judged_baseline(point, kernel) if point.baseline is None else point


def with_judged_baseline(point: KernelPoint, kernel: KernelVerdict) -> KernelPoint:
    """``point`` with the baseline its verdict names: same work, the baseline's median time.

    Another card's level is drawn at its figure on this card (``baseline.center`` against the
    ``percent_of_baseline_roof`` now: its time scaled by the ratio the roofs predict, or the
    gate's level of its nights here), as the verdict reads it: unscaled, an H200 run drew
    kernels that kept up with the card as improved on its roof.
    """
    base = kernel.baseline
    if not point.on_roof or base is None or not base.time_s or not kernel.time_s:
        return point
    if base.device is not None:  # its level's time here: now's at its percent of the level
        if not base.center or not kernel.percent_of_baseline_roof:
            return point
        ratio = base.center / kernel.percent_of_baseline_roof
    else:
        ratio = kernel.time_s / base.time_s
    achieved = point.achieved_flop_per_s * ratio
    if not math.isfinite(achieved) or achieved <= 0:
        return point
    return replace(point, baseline=(point.intensity, achieved), baseline_precision=base.binding)
