"""The roofline chart's zero-FLOP strip: copies and memsets at their percent of bandwidth roof.

Kernels that move bytes but do no FLOPs have no place on log-log FLOP/s axes, yet they are often
most of a run's GPU time. The strip at the chart's left edge shows them on a linear scale of
percent of the bandwidth roof (100% is the roof). Its artists carry ``gid``s: ``no-flops`` for
the axes, ``no-flops:kernels`` for the markers, ``no-flops:roof`` for the 100% line and
``no-flops:label:<name>`` for the labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
from matplotlib.axes import Axes


class NoFlopsMark(NamedTuple):
    """One kernel on the strip: its name, percent of the bandwidth roof, share of GPU time."""

    name: str
    percent: float
    time_share: float


STRIP_TITLE = "no FLOPs counted:\n% of bandwidth roof"
_MARKER_AREA = (20.0, 400.0)  # points^2 for time share 0 and 1, as on the main axes
_FONTSIZE = 7.0
_LINE = 1.3  # a label's height, in font sizes


def draw_no_flops(
    ax: Axes, kernels: Sequence[NoFlopsMark], short: Mapping[str, str], *, wide: bool = False
) -> None:
    """Markers at x = 0, y = percent of the bandwidth roof; marker area grows with time share.

    Only the kernels ``short`` names get a label (a chart names a few dozen at most), in a
    column beside the markers that keeps them apart (``column_heights``). ``wide``: the
    strip is the whole chart (no kernel is on the FLOP/s axes), its labels inside it.
    """
    ax.set_gid("no-flops")
    percents = [k.percent for k in kernels]
    shares = np.clip(np.array([k.time_share for k in kernels], dtype=float), 0.0, 1.0)
    sizes = _MARKER_AREA[0] + (_MARKER_AREA[1] - _MARKER_AREA[0]) * np.sqrt(shares)
    markers = ax.scatter([0.0] * len(kernels), percents, s=sizes, color="#333333", alpha=0.75)
    markers.set_gid("no-flops:kernels")
    right = 6.0 if wide else 1.0
    (roof,) = ax.plot([-1.0, right], [100.0, 100.0], "-", color="#1f77b4", linewidth=1.2)
    roof.set_gid("no-flops:roof")
    ax.set_xlim(-1.0, right)
    ax.set_ylim(0.0, max([100.0, *percents]) * 1.1)
    ax.set_xticks([])
    ax.set_title(STRIP_TITLE, fontsize="small")
    ax.set_ylabel("% of bandwidth roof")
    ax.grid(True, axis="y", alpha=0.3)
    _label_column(ax, [k for k in kernels if k.name in short], short)


def _label_column(ax: Axes, kernels: Sequence[NoFlopsMark], short: Mapping[str, str]) -> None:
    """Name ``kernels`` one label a line, each as near its marker as the others let it.

    The strip is one column: names drawn at their markers' heights piled into an unreadable
    block (44 copy benchmarks of one nvbench file within 15% of each other). Where more
    names are asked than lines fit, the kernels with most GPU time are named.
    """
    fig = ax.get_figure()
    if not kernels or fig is None:  # nothing to name: no layout to fix
        return
    fig.canvas.draw()  # the layout is final: data -> display transforms hold
    to_points = 72.0 / fig.dpi
    box = ax.get_window_extent()
    low, high, gap = box.y0 * to_points, box.y1 * to_points, _FONTSIZE * _LINE
    ranked = sorted(kernels, key=lambda k: -k.time_share)[: max(int((high - low) // gap), 0)]
    anchors = np.array([ax.transData.transform((0.0, k.percent))[1] for k in ranked]) * to_points
    for k, anchor, height in zip(
        ranked, anchors, column_heights(anchors, gap, low, high), strict=True
    ):
        moved = abs(height - anchor) > 0.5
        label = ax.annotate(
            f"{short[k.name]} {k.percent:.0f}%",
            xy=(0.0, k.percent),
            xytext=(12, height - anchor),
            textcoords="offset points",
            fontsize=_FONTSIZE,
            va="center",
            arrowprops={"arrowstyle": "-", "color": "#999999", "lw": 0.5} if moved else None,
            parse_math=False,  # names are data: `$x$` in a name is not math text
        )
        label.set_gid(f"no-flops:label:{k.name}")


def column_heights(
    anchors: npt.NDArray[Any], gap: float, low: float, high: float
) -> npt.NDArray[Any]:
    """Label heights as near ``anchors`` as can be, ``gap`` apart and within ``low``-``high``.

    Labels are pushed up from the bottom past the one below, then down from the top past the
    one above: the order of the anchors is kept, and so is each height where it is free.
    """
    order = np.argsort(anchors, kind="stable")
    heights = anchors[order].astype(float)
    for i in range(len(heights)):
        floor = low + gap / 2 if i == 0 else heights[i - 1] + gap
        heights[i] = max(heights[i], floor)
    for i in reversed(range(len(heights))):
        ceiling = high - gap / 2 if i == len(heights) - 1 else heights[i + 1] - gap
        heights[i] = min(heights[i], ceiling)
    placed = np.empty_like(heights)
    placed[order] = heights
    return placed
