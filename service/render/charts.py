"""Roofline and trend charts (matplotlib, headless Agg backend), saved as SVG or PNG.

Every artist a reader (or a test) may want to find carries a ``gid``: ``roof:<precision>:<tier>``
for roof polylines, ``ridge:<precision>:<tier>`` for ridge markers, ``kernels`` for the kernel
scatter, ``baselines`` for the baseline points, ``arrow:<name>`` for baseline-to-current arrows,
``label:<name>`` for kernel labels, the zero-FLOP strip's in ``service.render.no_flops``, and the
trend chart's in ``service.render.trends``. The roofs are drawn by ``service.render.roof_lines``.
"""

from __future__ import annotations

import io
import logging
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import matplotlib

matplotlib.use("Agg")  # headless: CI runners and the service have no display

import numpy as np
import numpy.typing as npt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from collectors.schema import RunRecord
from rules import KernelVerdict, Placement, Roof, percent_of_resource
from service.render.labels import place_labels, short_names
from service.render.no_flops import NoFlopsMark, draw_no_flops
from service.render.roof_lines import draw_roofs, log_axes, used_precisions, x_span, y_span

_log = logging.getLogger(__name__)

ImageFormat = Literal["svg", "png"]
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
        baseline_precision: The precision whose roof the baseline was bound by, when it differs
            (a GEMM that fell off the tensor cores): that roof is drawn too.
        bandwidth_percent: For a kernel that moves bytes but does no FLOPs (a copy, a memset):
            its percent of the bandwidth roof, drawn on the chart's zero-FLOP strip instead of
            on the log-log axes (where zero FLOP/s has no place).
    """

    name: str
    intensity: float
    achieved_flop_per_s: float
    time_share: float = 0.0
    precision: str | None = None
    baseline: tuple[float, float] | None = None
    baseline_precision: str | None = None
    bandwidth_percent: float | None = None

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


def _draw_kernels(ax: Axes, kernels: Sequence[KernelPoint]) -> None:
    xs = [k.intensity for k in kernels]
    ys = [k.achieved_flop_per_s for k in kernels]
    scatter = ax.scatter(xs, ys, s=_marker_sizes(kernels), color="#333333", alpha=0.75, zorder=3)
    scatter.set_gid("kernels")
    moved = [
        k
        for k in kernels
        if k.baseline and _moved(k.baseline, (k.intensity, k.achieved_flop_per_s))
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
    percent of the bandwidth roof; the main axes stay ``fig.axes[0]``.

    Args:
        roof: The roof to draw; one polyline per precision the kernels (or their baselines)
            use and per tier.
        kernels: The kernels; marker area grows with ``time_share``.
        tiers: Memory tiers to draw (default: every tier of the roof, outermost first).
        title: Chart title (default: the roof's label).
    """
    drawn_tiers = [
        t for t in (tiers or roof.bandwidth_byte_per_s) if t in roof.bandwidth_byte_per_s
    ]
    on_roof = [k for k in kernels if k.on_roof]
    no_flops = [k for k in kernels if not k.on_roof]
    fig = Figure(figsize=(9.5 if no_flops else 8, 5.5), layout="constrained")
    grid = fig.add_gridspec(1, 2, width_ratios=(1.4, 8)) if no_flops else None
    ax = fig.add_subplot(grid[0, 1]) if grid is not None else fig.add_subplot()
    log_axes(ax)
    framed = _frame(ax, roof, on_roof, drawn_tiers)
    if on_roof:
        _draw_kernels(ax, on_roof)
        _label_kernels(ax, fig, on_roof)
    if grid is not None:
        marks = [NoFlopsMark(k.name, k.bandwidth_percent or 0.0, k.time_share) for k in no_flops]
        draw_no_flops(fig.add_subplot(grid[0, 0]), marks, short_names([k.name for k in no_flops]))
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("achieved FLOP/s")
    ax.set_title(title or roof.label, parse_math=False)
    ax.grid(True, which="major", alpha=0.3)
    if framed:
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
        if point is not None and point.baseline is None and k.key in judged:
            point = with_judged_baseline(point, judged[k.key])
        if point is not None:
            points.append(point)
    return points


def with_judged_baseline(point: KernelPoint, kernel: KernelVerdict) -> KernelPoint:
    """``point`` with the baseline its verdict names: same work, the baseline's median time."""
    base = kernel.baseline
    if not point.on_roof or base is None or not base.time_s or not kernel.time_s:
        return point
    achieved = point.achieved_flop_per_s * kernel.time_s / base.time_s
    if not math.isfinite(achieved) or achieved <= 0:
        return point
    return replace(point, baseline=(point.intensity, achieved), baseline_precision=base.binding)
