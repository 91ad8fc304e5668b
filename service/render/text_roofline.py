"""A small text roofline for terminals: log-log axes, the roof, the ridge and the kernel."""

from __future__ import annotations

import math


def _span(intensity: float, ridge: float) -> tuple[float, float]:
    lo = min(intensity, ridge) / 30.0
    hi = max(intensity, ridge) * 30.0
    return math.log10(max(lo, 1e-6)), math.log10(max(hi, 1e-5))


def text_roofline(
    intensity: float,
    achieved: float | None,
    peak: float,
    bandwidth: float,
    *,
    width: int = 56,
    height: int = 12,
) -> str:
    """Draw the roof ``min(peak, I * bandwidth)`` with the kernel as ``*`` (or ``o`` at the roof).

    The y axis spans three decades below the peak; the x axis spans the ridge and the kernel.
    """
    ridge = peak / bandwidth
    x0, x1 = _span(max(intensity, 1e-6), ridge)
    y1 = math.log10(peak) + 0.15
    y0 = y1 - 3.3
    grid = [[" "] * width for _ in range(height)]

    def row_of(flops: float) -> int:
        frac = (math.log10(max(flops, 1e-30)) - y0) / (y1 - y0)
        return min(height - 1, max(0, height - 1 - round(frac * (height - 1))))

    def col_of(i: float) -> int:
        frac = (math.log10(max(i, 1e-30)) - x0) / (x1 - x0)
        return min(width - 1, max(0, round(frac * (width - 1))))

    for col in range(width):
        i = 10 ** (x0 + (x1 - x0) * col / (width - 1))
        roof = min(peak, i * bandwidth)
        if math.log10(roof) >= y0:
            grid[row_of(roof)][col] = "-" if i >= ridge else "/"
    grid[row_of(peak)][col_of(ridge)] = "+"
    mark = achieved if achieved is not None else min(peak, intensity * bandwidth)
    grid[row_of(mark)][col_of(intensity)] = "*" if achieved is not None else "o"
    lines = ["FLOP/s |" + "".join(r) for r in grid]
    lines.append("       +" + "-" * width)
    lines.append(f"        intensity (FLOP/byte, log), ridge + at {ridge:.4g}")
    return "\n".join(lines)
