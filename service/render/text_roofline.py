"""A small text roofline for terminals: log-log axes, the roof, the ridge and the kernel."""

from __future__ import annotations

import math

#: Bounds of what a log axis places: 0 and overflowed figures land on an edge, never raise.
_TINY, _HUGE = 1e-30, 1e300


def _log(value: float) -> float:
    return math.log10(min(max(value, _TINY), _HUGE))


def _span(intensity: float, ridge: float) -> tuple[float, float]:
    lo = min(intensity, ridge) / 30.0
    hi = max(intensity, ridge) * 30.0
    return _log(max(lo, 1e-6)), _log(max(hi, 1e-5))


def text_roofline(
    intensity: float | None,
    achieved: float | None,
    peak: float,
    bandwidth: float,
    *,
    width: int = 56,
    height: int = 12,
) -> str:
    """Draw the roof ``min(peak, I * bandwidth)`` with the kernel as ``*`` (or ``o`` at the roof).

    The y axis spans three decades below the peak; the x axis spans the ridge and the kernel.
    An unbounded intensity (no bytes) sits at the right edge; None (no work) draws no kernel.
    """
    ridge = peak / bandwidth
    shown = intensity if intensity is not None and math.isfinite(intensity) else ridge
    x0, x1 = _span(max(shown, 1e-6), ridge)
    y1 = _log(peak) + 0.15
    y0 = y1 - 3.3
    grid = [[" "] * width for _ in range(height)]

    def row_of(flops: float) -> int:
        frac = (_log(flops) - y0) / (y1 - y0)
        return min(height - 1, max(0, height - 1 - round(frac * (height - 1))))

    def col_of(i: float) -> int:
        frac = (_log(i) - x0) / (x1 - x0)
        return min(width - 1, max(0, round(frac * (width - 1))))

    for col in range(width):
        i = 10 ** (x0 + (x1 - x0) * col / (width - 1))
        roof = min(peak, i * bandwidth)
        if _log(roof) >= y0:
            grid[row_of(roof)][col] = "-" if i >= ridge else "/"
    grid[row_of(peak)][col_of(ridge)] = "+"
    if intensity is not None:
        mark = achieved if achieved is not None else min(peak, intensity * bandwidth)
        grid[row_of(mark)][col_of(intensity)] = "*" if achieved is not None else "o"
    lines = ["FLOP/s |" + "".join(r) for r in grid]
    lines.append("       +" + "-" * width)
    lines.append(f"        intensity (FLOP/byte, log), ridge + at {ridge:.4g}")
    return "\n".join(lines)
