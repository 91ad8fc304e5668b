"""Running totals of a kernel's extras: its clocks, launch configuration and profile figures.

``collectors.ncu.aggregate`` adds each launch's (or a batch's) extras as it streams; a kernel's
record takes their time-weighted means.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


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

    def add_in_order(self, values: Sequence[Any], seconds: Any) -> None:
        """Add a batch of launches (arrays, one entry a launch), summed as one at a time."""
        self.weighted = [
            in_order(t, v * seconds) for t, v in zip(self.weighted, values, strict=True)
        ]
        self.plain = [in_order(t, v) for t, v in zip(self.plain, values, strict=True)]
        self.low = [min(t, float(v.min())) for t, v in zip(self.low, values, strict=True)]
        self.high = [max(t, float(v.max())) for t, v in zip(self.high, values, strict=True)]
        self.time = in_order(self.time, seconds)
        self.count += len(seconds)


def in_order(start: float, values: Any) -> float:
    """``start`` plus each of ``values`` in turn, as launches added one at a time add up.

    numpy's ``sum`` adds pairwise: the launches of a kernel read in a batch (the fast path)
    and one by one (the careful reader) gave totals a last digit apart, so two content hashes
    for one file. ``np.add.accumulate`` adds in order.
    """
    if not len(values):
        return start
    return float(np.add.accumulate(np.concatenate(([start], values)))[-1])


def merged(old: tuple[float, ...], new: tuple[float, ...]) -> tuple[float, ...]:
    """Two extras' running totals as one: sums added, the lowest and highest kept."""
    return (*map(operator.add, old[:4], new[:4]), min(old[4], new[4]), max(old[5], new[5]))
