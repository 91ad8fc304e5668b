"""How many kernels a PR comment keeps to stay under GitHub's size limit, in a few renders.

``render(keep)`` renders the whole comment with the ``keep`` most important kernels (rows and
details); the answer is the largest ``keep`` whose comment fits. Every probe is a full render
and builds the details of every kept kernel, so the search probes as few ``keep`` as it can,
guessing each from the lengths already seen (a comment grows about linearly with its kernels)
and never asks for more kernels than it needs: a 2,000-kernel verdict with 250 findings keeps
38 and builds 78, where halving from all 250 built them all.

Below ``total`` every comment carries the "left out" note, so a comment with more kernels is
longer. The full comment drops that note, so it is rendered only when it might fit: when no
shorter comment seen is longer than the limit by more than the note (``NOTE_MARGIN``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

#: More than the "left out" note (and the blank lines around it) of ``verdict.md.j2``.
NOTE_MARGIN = 1_000


def fit(
    render: Callable[[int], str],
    total: int,
    max_chars: int,
    cut: Callable[[str, int], str],
    size: Callable[[str], int] = len,
) -> str:
    """The largest ``render(keep)`` (keep <= total) whose ``size`` is at most ``max_chars``.

    ``size`` is characters by default (a comment's limit); the job summary's is in bytes.
    When none fits, ``cut(render(0), max_chars)``.
    """
    seen: dict[int, str] = {}
    sizes: dict[int, int] = {}

    def probe(keep: int) -> int:
        seen[keep] = render(keep)
        sizes[keep] = size(seen[keep])
        return sizes[keep]

    if total == 0 or not _over_by_margin(probe, total, max_chars):
        text = render(total)
        if size(text) <= max_chars:
            return text
    best = _largest_fitting(probe, sizes, total - 1, max_chars)
    return seen[best] if best is not None else cut(seen.get(0) or render(0), max_chars)


def _over_by_margin(probe: Callable[[int], int], total: int, max_chars: int) -> bool:
    """Whether some comment short of ``total`` passes ``max_chars`` by more than the note.

    Probes 0, 1, then where the lengths so far say the limit plus the margin is passed
    (a quarter further, at least twice as many as the last), up to ``total - 1``.
    """
    limit = max_chars + NOTE_MARGIN
    empty = probe(0)
    keep, length = 0, empty
    while length <= limit and keep < total - 1:
        if keep == 0:
            keep = 1
        else:
            per_kernel = max((length - empty) / keep, 1.0)
            ahead = math.ceil(1.25 * (limit - length) / per_kernel)
            keep = min(total - 1, max(keep + ahead, 2 * keep))
        length = probe(keep)
    return length > limit


def _largest_fitting(
    probe: Callable[[int], int], sizes: dict[int, int], high: int, max_chars: int
) -> int | None:
    """The largest keep in [0, high] that fits, searched between the sizes seen."""
    fitting = [k for k in sizes if k <= high and sizes[k] <= max_chars]
    over = [k for k in sizes if k <= high and sizes[k] > max_chars]
    low = max(fitting, default=-1) + 1  # invariant: keep=low-1 fits (or low == 0)
    high = min(over, default=high + 1) - 1  # invariant: keep=high+1 does not fit
    fit_at, over_at = low - 1, high + 1
    fit_len = sizes[fit_at] if fit_at >= 0 else 0
    over_len = sizes[over_at] if over_at in sizes else max_chars + 1
    halve = False  # bisect when a guess left more than half the bounds (lumpy kernels)
    while low <= high:
        span = max(over_len - fit_len, 1)
        guess = fit_at + (max_chars - fit_len) * (over_at - fit_at) // span
        middle = (low + high) // 2 if halve else min(max(guess, low), high)
        before = high - low
        length = probe(middle)
        if length <= max_chars:
            low, fit_at, fit_len = middle + 1, middle, length
        else:
            high, over_at, over_len = middle - 1, middle, length
        halve = high - low > before // 2
    return fit_at if fit_at >= 0 else None
