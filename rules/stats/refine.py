"""From window candidates to change points: placement, drift check, whole-segment confirmation.

Local maxima of the window statistic are the candidates; each is placed at the best two-level
split of its neighbourhood, and dropped when a straight line (a slow drift) fits that
neighbourhood as well as a step does. Last, each change is re-tested over the whole segments
between its neighbours, with the noise re-estimated around the segments' levels (weakest
first, as e-divisive's significance step). The placement is numpy over every candidate at
once; the merging and confirmation loops run over the (few) placed changes only.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import numpy.typing as npt

from rules.stats.constants import MAD_SCALE
from rules.stats.placement import Placed
from rules.stats.robust import FloatArray, _location, fast_median


def _refine(
    shape: tuple[int, ...],
    candidates: tuple[npt.NDArray[np.int_], npt.NDArray[np.int_]],
    strength: FloatArray,
    placed: Placed,
    gap: int,
) -> npt.NDArray[np.bool_]:
    """Move each candidate to the best split near it, then merge candidates that coincide.

    A window statistic peaks as soon as most of a window has moved, which can be a point or
    two early; the L1-optimal split of the neighbourhood (the candidate's own window on each
    side) places the change where the level actually moved (``placed``, numpy over all
    candidates, ``rules.stats.placement``). Candidates from several window sizes that land
    within ``gap`` (the smallest window) of each other are one change: the strongest
    (``strength``, the robust z) that stands against a slow drift is kept.

    The drift check (a line through every pair of points) is made only for the candidates the
    merge reaches with no stronger change near: a candidate not yet checked is taken to stand,
    the ones reached so are checked at once, and the merge is repeated until it reaches none
    unchecked. The others' checks could not change the result.
    """
    rows, targets = list(map(int, candidates[0])), list(map(int, placed.targets))
    order = list(map(int, np.argsort(-strength, kind="stable")))
    known, stands = ~placed.checked, np.ones(len(rows), dtype=bool)
    while True:
        refined, unchecked = _merge(
            shape, (rows, targets), order, (list(map(bool, known)), list(map(bool, stands))), gap
        )
        if not unchecked:
            return refined
        which = np.asarray(unchecked)
        stands[which], known[which] = placed.stands(which), True


def _merge(
    shape: tuple[int, ...],
    placed: tuple[list[int], list[int]],
    order: list[int],
    checks: tuple[list[bool], list[bool]],
    gap: int,
) -> tuple[npt.NDArray[np.bool_], list[int]]:
    """Strongest first, a change within ``gap`` of a stronger one is that change.

    The candidates reached that are not yet checked against a drift (``checks``: whether
    known, whether standing) are kept, and listed.
    """
    refined = np.zeros(shape, dtype=bool)
    (rows, targets), (known, stands) = placed, checks
    unchecked = []
    for k in order:
        row, target = rows[k], targets[k]
        if refined[row, max(0, target - gap + 1) : target + gap].any():
            continue
        if not known[k]:
            unchecked.append(k)
        elif not stands[k]:
            continue  # a slow drift fits the neighbourhood as well as a step
        refined[row, target] = True
    return refined, unchecked


def _segment_z(row: FloatArray, bounds: list[int], floor: float) -> list[float]:
    """Robust z of each inner boundary, comparing the whole segments on either side."""
    parts = [row[a:b][~np.isnan(row[a:b])] for a, b in itertools.pairwise(bounds)]
    if any(p.size == 0 for p in parts):
        return [math.inf] * (len(parts) - 1)  # cannot happen for refined changes; keep them
    # Residuals around each segment's median: unlike first differences, every point counts
    # once, so the noise estimate is tighter (and a step does not inflate it).
    resid = np.concatenate([p - fast_median(p) for p in parts if p.size])
    spread = MAD_SCALE * fast_median(np.abs(resid))
    noise = max(spread, floor * abs(fast_median(np.concatenate(parts))))
    # Each level with its standard error in noise units: the SE factor over sqrt(points).
    located = [(_location(p), p.size) for p in parts]
    levels = [(level, factor / math.sqrt(n)) for (level, factor), n in located]
    return [
        _z(abs(right - left), noise * math.hypot(left_se, right_se))
        for (left, left_se), (right, right_se) in itertools.pairwise(levels)
    ]


def _z(difference: float, scale: float) -> float:
    """``difference / scale``; with no noise at all (constant segments), any step is certain."""
    if scale > 0:
        return difference / scale
    return math.inf if difference > 0 else 0.0


def _confirm(
    values: FloatArray, found: npt.NDArray[np.bool_], confirm_z: float, floor: float
) -> npt.NDArray[np.bool_]:
    """Drop, weakest first, changes whose whole segments do not differ by ``confirm_z``.

    The window scan judges each change on its own neighbourhood; this re-tests it over the
    full segments between its neighbouring changes (as e-divisive's significance step does),
    which removes changes that only a local cluster of odd nights supported.
    """
    confirmed = found.copy()
    for row in np.flatnonzero(found.any(axis=1)):
        kept = [int(i) for i in np.flatnonzero(found[row])]
        while kept:
            z = _segment_z(values[row], [0, *kept, values.shape[1]], floor)
            weakest = int(np.argmin(z))
            if z[weakest] >= confirm_z:
                break
            kept.pop(weakest)
        confirmed[row] = False
        confirmed[row, kept] = True
    return confirmed
