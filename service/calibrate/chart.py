"""Chart of a measured roofline: sweep points, fitted roof, datasheet roof above it.

Built on ``matplotlib.figure.Figure`` with the Agg canvas (no pyplot, no display): safe on
headless runners and in threads. SVG or PNG, chosen by the file's suffix.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from rules import Roof
from service.calibrate.fit import FloatArray, roof_at
from service.calibrate.model import Ceilings
from service.calibrate.storage import check_chart_path


def intensity_grid(ceilings: Ceilings, points: int = 200) -> FloatArray:
    """Log-spaced intensities spanning the sweep and the ridges, with a margin."""
    values = [p.intensity_flop_per_byte for p in ceilings.sweep]
    values += [r for r in ceilings.ridge_flop_per_byte.values() if r > 0]
    low, high = (min(values), max(values)) if values else (0.1, 100.0)
    return np.logspace(np.log10(low / 4), np.log10(high * 4), points)


def _roof_line(
    ax: Axes, grid: FloatArray, peak: float, bandwidth: float, label: str, style: str
) -> None:
    ax.plot(grid, roof_at(grid, peak, bandwidth), style, label=label, gid=label)


def roofline_figure(ceilings: Ceilings, datasheet: Roof | None = None) -> Figure:
    """The measured roofline of ``ceilings`` (and ``datasheet``'s roof when given).

    Artists carry a ``gid`` naming what they show ("sweep", "measured fp32", ...), so tests
    and tools can find their data.
    """
    fig = Figure(figsize=(7.5, 5.0), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    grid = intensity_grid(ceilings)
    dram = ceilings.bandwidth_byte_per_s.get("dram")
    for precision, peak in sorted(ceilings.peak_flop_per_s.items(), key=lambda kv: -kv[1]):
        if dram:
            _roof_line(ax, grid, peak, dram, f"measured {precision}", "-")
    sheet_dram = datasheet.bandwidth_byte_per_s.get("dram") if datasheet else None
    sheet_peak = datasheet.peak_flop_per_s.get(ceilings.sweep_precision) if datasheet else None
    if datasheet and sheet_dram and sheet_peak:
        _roof_line(ax, grid, sheet_peak, sheet_dram, f"datasheet {ceilings.sweep_precision}", "k--")
    x = [p.intensity_flop_per_byte for p in ceilings.sweep]
    y = [p.flop_per_s for p in ceilings.sweep]
    ax.scatter(x, y, color="tab:red", zorder=3, label="sweep (K FMAs per element)", gid="sweep")
    for point in ceilings.sweep:
        ax.annotate(
            f"K={point.k}",
            (point.intensity_flop_per_byte, point.flop_per_s),
            textcoords="offset points",
            xytext=(4, -10),
            fontsize=7,
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte, dram)")
    ax.set_ylabel("FLOP/s")
    ax.set_title(
        f"{ceilings.device}: measured roofline ({ceilings.backend}, {ceilings.host})",
        parse_math=False,
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return fig


def save_chart(fig: Figure, path: Path) -> None:
    """Write ``fig`` as SVG or PNG, by ``path``'s suffix."""
    check_chart_path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format=path.suffix.lower().lstrip("."))
