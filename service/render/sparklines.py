"""The trend of a verdict's row: block characters, and where a new runner's runs begin.

A runner swap moves every kernel at once (the new card's clocks, cooling, driver); a step
in a trend that sits right at the swap is the runner's as likely as the code's, so the
trend marks it (``RUNNER_MARK``), as the dashboard's trend charts draw a dotted line there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rules import Verdict, new_runner

SPARK_LEVELS = "▁▂▃▄▅▆▇█"
#: Points shown in a sparkline (the newest ones).
SPARK_POINTS = 16
#: Drawn before the first point measured on a runner new to the baseline. Not ``|``: it
#: would end a markdown table's cell.
RUNNER_MARK = "¦"


def sparkline(values: Sequence[float], runner_since: int | None = None) -> str:
    """Unicode sparkline of ``values`` (newest last); empty for fewer than two points.

    ``runner_since``: the position in ``values`` of the first point on a new runner; the
    mark goes before it when it is among the points shown (not before the first of them).
    """
    tail = values[-SPARK_POINTS:]
    points = [v for v in tail if v is not None and math.isfinite(v)]
    if len(points) < 2:
        return ""
    line = _blocks(points)
    cut = None if runner_since is None else runner_since - (len(values) - len(tail))
    if cut is None or len(points) != len(tail) or not 0 < cut < len(line):
        return line  # a gap would misplace the mark: none rather than a wrong one
    return line[:cut] + RUNNER_MARK + line[cut:]


def _blocks(points: Sequence[float]) -> str:
    low, high = min(points), max(points)
    if high - low < 1e-12:
        return SPARK_LEVELS[3] * len(points)
    top = len(SPARK_LEVELS) - 1
    return "".join(SPARK_LEVELS[round((v - low) / (high - low) * top)] for v in points)


def runner_legend(verdict: Verdict) -> str:
    """`` ¦ in a trend: the first run on runner r2, new to this baseline.`` when one is marked."""
    runner = new_runner(verdict.notes)
    marked = any(k.baseline and k.baseline.runner_since is not None for k in verdict.kernels)
    if runner is None or not marked:
        return ""
    return f" {RUNNER_MARK} in a trend: the first run on runner {runner}, new to this baseline."
