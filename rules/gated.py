"""What the gate decided about each kernel, so the verdict's table says the same.

The baseline rules (roof-drop, time-regression) judge every kernel with the gate
(``rules.stats``); the engine builds each kernel's table row afterwards. Two of its figures
must agree with the gate:

* **The baseline.** The gate judges a kernel against the level since its last confirmed
  change, leaving out the nights of a pending run. Over other runs the two disagree: a
  kernel that rose from 50% to 60% of roof six nights ago and is back at 50% on a PR is a
  roof-drop suspect (level 60.1% over 6 runs, -16.9%) in a row that said "50.4% (n=14),
  -0.7%", a median of both levels. So the table summarises the segment's runs (the newest
  ``baseline.window`` of them).
* **Improved.** A kernel is improved when the gate says so (at night a confirmed change
  upwards; on a PR a value far beyond noise, ``rules.stats.pr``), not when one value of
  2,000 clears a per-value threshold: 300 kernels of 20 stable 2,000-kernel PRs were
  "improved" that way (``bench_pr_cli.py``), 1 is now.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from rules.context import RuleContext
from rules.history import FloatArray
from rules.stats import Judgement


@dataclass(frozen=True)
class Segment:
    """Where the gate's segment lies in a baseline series, counted from its newest value.

    Attributes:
        n: Values in the segment (NaN-free).
        after: Values after it: a pending run, left out of the level.
    """

    n: int
    after: int

    def rows(self, values: FloatArray) -> slice | None:
        """The rows of ``values`` in the segment (None: all of them, or none).

        ``values`` is the newest part of the series the gate judged, NaNs kept, oldest first.
        Most segments are longer than the baseline window: then every row is in it.
        """
        known = np.flatnonzero(~np.isnan(values))
        end = known.size - self.after
        first = max(0, end - self.n)
        if end <= first or (first == 0 and end == known.size):
            return None
        return slice(int(known[first]), int(known[end - 1]) + 1)


@dataclass(frozen=True)
class Gated:
    """The gate's decision on one kernel: its segment (None: none usable) and ``improved``."""

    segment: Segment | None
    improved: bool

    def rows(self, values: FloatArray) -> slice | None:
        """``Segment.rows`` of ``values`` (None: no segment, or all of them)."""
        return self.segment.rows(values) if self.segment else None


def _recorded(ctx: RuleContext) -> dict[tuple[str, str], Gated]:
    return {}


def segment_of(judged: Judgement, history: FloatArray) -> Segment | None:
    """``judged``'s segment in ``history`` (the baseline it was judged against), if it had one."""
    known = int(np.count_nonzero(~np.isnan(history)))
    after = known - (judged.segment_start + judged.n)
    if not judged.enough or judged.n <= 0 or after < 0:
        return None
    return Segment(judged.n, after)


def record(
    ctx: RuleContext, metric: str, judged: Iterable[tuple[str, Judgement, FloatArray]]
) -> None:
    """Remember the gate's decision on ``metric`` per kernel (key, judgement, history judged)."""
    decisions = ctx.derived(_recorded)
    for key, judgement, history in judged:
        decisions[(metric, key)] = Gated(segment_of(judgement, history), judgement.improved)


def recorded(ctx: RuleContext, metric: str, key: str) -> Gated | None:
    """The gate's decision on ``key``'s ``metric`` (None: no baseline rule judged it)."""
    return ctx.derived(_recorded).get((metric, key))
