"""Which kernels a roofline chart names: a few dozen of a run's thousands.

Every kernel is a point on the chart. Its name (and its arrow from the baseline) costs far
more: a 2,000-kernel run drew 2,000 names over one another and 1,274 arrows of noise, a
3.6 MB SVG that took 15 s to draw (``check --charts``, ``plot run``, the compare page).
Past ``MAX_NAMED`` kernels, the chart names the ones a reader looks for: those its verdict
flags (regressed or suspect) first, then the largest shares of GPU time, each only where
its name fits near its point; a note on the chart says so.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Kernels named on one chart at most (about what a 8 x 5.5 in chart holds readably).
MAX_NAMED = 40


def named_kernels(
    flagged: Sequence[bool], time_shares: Sequence[float], limit: int = MAX_NAMED
) -> frozenset[int]:
    """Positions of the kernels to name: the flagged first, then by share of GPU time."""
    order = sorted(range(len(time_shares)), key=lambda i: (not flagged[i], -time_shares[i]))
    return frozenset(order[:limit])


def named_note(total: int) -> str:
    """The note on a chart that names fewer kernels than it draws."""
    return f"{total:,} kernels: the flagged and the longest are named where there is room"
