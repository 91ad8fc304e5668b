"""Running totals of a kernel's extras: its clocks, launch configuration and profile figures.

``collectors.ncu.aggregate`` adds each launch's (or a batch's) extras as it streams; a kernel's
record takes their time-weighted means.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(slots=True)
class Extras:
    """Running totals of one plan's extras: value x time, value, lowest, highest; time, count."""

    weighted: list[float]
    plain: list[float]
    low: list[float]
    high: list[float]
    time: float = 0.0
    count: int = 0

    @classmethod
    def empty(cls, n: int) -> Extras:
        """Totals of ``n`` extras before any launch."""
        return cls([0.0] * n, [0.0] * n, [math.inf] * n, [-math.inf] * n)

    def add(
        self,
        weighted: Sequence[float],
        seconds: float,
        plain: Sequence[float],
        low: Sequence[float],
        high: Sequence[float],
        count: int,
    ) -> None:
        """Add launches' totals; a single launch passes its values as sums, lows and highs."""
        if count == 1 and weighted is plain:  # one launch: its values, weighted here
            weighted = [v * seconds for v in plain]
        self.weighted = list(map(operator.add, self.weighted, weighted))
        self.plain = list(map(operator.add, self.plain, plain))
        self.low = list(map(min, self.low, low))
        self.high = list(map(max, self.high, high))
        self.time += seconds
        self.count += count


def merged(old: tuple[float, ...], new: tuple[float, ...]) -> tuple[float, ...]:
    """Two extras' running totals as one: sums added, the lowest and highest kept."""
    return (*map(operator.add, old[:4], new[:4]), min(old[4], new[4]), max(old[5], new[5]))
