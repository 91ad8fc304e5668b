"""The roofline chart's zero-FLOP strip: copies and memsets at their percent of bandwidth roof.

Kernels that move bytes but do no FLOPs have no place on log-log FLOP/s axes, yet they are often
most of a run's GPU time. The strip at the chart's left edge shows them on a linear scale of
percent of the bandwidth roof (100% is the roof). Its artists carry ``gid``s: ``no-flops`` for
the axes, ``no-flops:kernels`` for the markers, ``no-flops:roof`` for the 100% line and
``no-flops:label:<name>`` for the labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
from matplotlib.axes import Axes


class NoFlopsMark(NamedTuple):
    """One kernel on the strip: its name, percent of the bandwidth roof, share of GPU time."""

    name: str
    percent: float
    time_share: float


STRIP_TITLE = "no FLOPs:\n% of bandwidth roof"
_MARKER_AREA = (20.0, 400.0)  # points^2 for time share 0 and 1, as on the main axes


def draw_no_flops(ax: Axes, kernels: Sequence[NoFlopsMark], short: Mapping[str, str]) -> None:
    """Markers at x = 0, y = percent of the bandwidth roof; marker area grows with time share.

    Only the kernels ``short`` names get a label (a chart names a few dozen at most).
    """
    ax.set_gid("no-flops")
    percents = [k.percent for k in kernels]
    shares = np.clip(np.array([k.time_share for k in kernels], dtype=float), 0.0, 1.0)
    sizes = _MARKER_AREA[0] + (_MARKER_AREA[1] - _MARKER_AREA[0]) * np.sqrt(shares)
    markers = ax.scatter([0.0] * len(kernels), percents, s=sizes, color="#333333", alpha=0.75)
    markers.set_gid("no-flops:kernels")
    (roof,) = ax.plot([-1.0, 1.0], [100.0, 100.0], "-", color="#1f77b4", linewidth=1.2)
    roof.set_gid("no-flops:roof")
    ax.set_xlim(-1.0, 1.0)
    ax.set_ylim(0.0, max([100.0, *percents]) * 1.1)
    ax.set_xticks([])
    ax.set_title(STRIP_TITLE, fontsize="small")
    ax.set_ylabel("% of bandwidth roof")
    ax.grid(True, axis="y", alpha=0.3)
    for k, percent in zip(kernels, percents, strict=True):
        if k.name not in short:
            continue
        label = ax.annotate(
            f"{short[k.name]} {percent:.0f}%",
            xy=(0.0, percent),
            xytext=(6, 0),
            textcoords="offset points",
            fontsize=7,
            va="center",
            rotation=0,
            parse_math=False,  # names are data: `$x$` in a name is not math text
        )
        label.set_gid(f"no-flops:label:{k.name}")
