"""A kernel's own one-night deviations: how far a single night has ever strayed from its level.

The PR gate without a re-measure step cannot tell a one-night dip from a real drop on one
measurement, so it warns. But a kernel's history says how large its one-night dips get: a drop
of 15% on a kernel whose 60 nights never strayed more than 3% is no dip that history has
shown. Such a drop fails at once (``beyond_own_dips``); a drop that a dip of the kernel's own
size could explain still waits for a re-measurement.

A night's deviation is its distance from the median of the ``DIP_WINDOW`` nights centred on
it, relative to that median: a lone dip (or spike) is its full size, while a step between two
levels is no deviation at all (the median of the window follows the step). Both sides count.

The fleet's history checks the rule itself (``own_dips``): a night far beyond every other
night of its kernel is what the rule would fail. When the stored nights hold so many of them
that a PR of this many kernels would expect more than ``family_error`` such nights, dips come
that no kernel's own history shows (clock dips spread over the fleet), and nothing fails at
once on its own dips.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numpy.lib.stride_tricks import sliding_window_view

from rules.stats.constants import DIP_MULTIPLE, DIP_WINDOW, MAD_SCALE, MIN_DIP_NIGHTS
from rules.stats.levels import Level, clean
from rules.stats.options import GateOptions
from rules.stats.robust import FloatArray


def deviations(history: npt.ArrayLike) -> FloatArray:
    """Each night's relative deviation from the median of the nights centred on it.

    Empty when there are fewer than ``MIN_DIP_NIGHTS`` nights (NaNs left out): too few to know
    the kernel's dips.
    """
    values = clean(history)
    if values.size < max(MIN_DIP_NIGHTS, DIP_WINDOW):
        return np.empty(0)
    centred = np.median(sliding_window_view(values, DIP_WINDOW), axis=1)
    middle = values[DIP_WINDOW // 2 : values.size - DIP_WINDOW // 2]
    usable = centred != 0
    devs: FloatArray = np.abs(middle[usable] / centred[usable] - 1)
    return devs


def largest_dip(history: npt.ArrayLike) -> float:
    """The largest one-night deviation of ``history`` (NaN: too few nights to say)."""
    devs = deviations(history)
    return float(devs.max()) if devs.size else math.nan


def _jumped(devs: FloatArray, opts: GateOptions) -> bool:
    """Whether one night lies as far beyond the kernel's other nights as the rule fails.

    Beyond ``DIP_MULTIPLE`` times every other night's deviation, at least ``min_effect``, and
    ``fail_at_once_z`` noises (the robust spread of the deviations) away.
    """
    if devs.size < 2:
        return False
    second, first = np.partition(devs, devs.size - 2)[-2:]
    noise = MAD_SCALE * float(np.median(devs))
    far = first >= opts.fail_at_once_z * noise and first >= opts.min_effect
    return bool(far and first > DIP_MULTIPLE * second)


@dataclass(frozen=True)
class OwnDips:
    """What a kernel's history says a dip can explain.

    Attributes:
        largest: Its largest one-night deviation (NaN: unknown, nothing fails on it).
        low: Its lowest night; ``high``: its highest. A value between them is a level the
            kernel has held (a runner with two modes, a return to an older level): no dip
            explains it better than the history itself, so it never fails at once.
    """

    largest: float = math.nan
    low: float = math.nan
    high: float = math.nan


def _own(history: npt.ArrayLike, devs: FloatArray) -> OwnDips:
    if not devs.size:
        return OwnDips()
    values = clean(history)
    return OwnDips(float(devs.max()), float(values.min()), float(values.max()))


def own_dips(histories: Sequence[npt.ArrayLike], opts: GateOptions) -> list[OwnDips]:
    """Each kernel's own dips; all unknown when the fleet's history rules the rule out.

    The rule's own error on the stored nights: nights that jumped far beyond the rest of their
    kernel, per night stored, times the kernels a PR measures, must stay within
    ``family_error``. Judged a block of equally long histories at a time
    (``_DipBlock``): a 2,000-kernel PR pays a few array operations, not 2,000 of each.
    """
    blocks = _blocks(_cleaned(histories))
    nights = sum(b.nights for b in blocks)
    jumps = sum(b.jumps(opts) for b in blocks)
    if not nights or jumps * len(histories) / nights > opts.family_error:
        return [OwnDips()] * len(histories)
    found = [OwnDips()] * len(histories)
    for block in blocks:
        for i, own in zip(block.rows, block.own(), strict=True):
            found[i] = own
    return found


@dataclass(frozen=True)
class _DipBlock:
    """Histories of one length (rows ``rows`` of the fleet) and their nights' deviations.

    ``devs`` holds one row per history (``deviations``, all of the same length) or, for a
    ragged block (a window median of zero leaves a night out), one array per history.
    """

    rows: list[int]
    values: FloatArray
    devs: FloatArray | list[FloatArray]

    @property
    def nights(self) -> int:
        return sum(d.size for d in self.devs)

    def jumps(self, opts: GateOptions) -> int:
        """How many of the block's histories have a night that ``_jumped``."""
        if isinstance(self.devs, list):
            return sum(_jumped(d, opts) for d in self.devs)
        devs = self.devs
        if devs.shape[1] < 2:
            return 0
        ordered = np.sort(devs, axis=1)
        second, first = ordered[:, -2], ordered[:, -1]
        noise = MAD_SCALE * np.median(devs, axis=1)
        far = (first >= opts.fail_at_once_z * noise) & (first >= opts.min_effect)
        return int(np.count_nonzero(far & (first > DIP_MULTIPLE * second)))

    def own(self) -> list[OwnDips]:
        """``_own`` of each history of the block, in ``rows`` order."""
        if isinstance(self.devs, list):
            return [_own(v, d) for v, d in zip(self.values, self.devs, strict=True)]
        if not self.devs.shape[1]:
            return [OwnDips()] * len(self.rows)
        largest, low, high = self.devs.max(axis=1), self.values.min(axis=1), self.values.max(axis=1)
        return [
            OwnDips(float(d), float(lo), float(hi))
            for d, lo, hi in zip(largest, low, high, strict=True)
        ]


def _cleaned(histories: Sequence[npt.ArrayLike]) -> list[FloatArray]:
    """``clean`` of each history; those without a NaN as they are (one test for all of them)."""
    arrays = [np.asarray(h, dtype=float).ravel() for h in histories]
    if not arrays:
        return []
    nans = np.concatenate([[0], np.cumsum(np.isnan(np.concatenate(arrays)))])
    ends = np.cumsum([a.size for a in arrays])
    counts = (nans[ends] - nans[ends - [a.size for a in arrays]]).tolist()
    return [clean(a) if n else a for a, n in zip(arrays, counts, strict=True)]


def _window_medians(values: FloatArray) -> FloatArray:
    """The median of the ``DIP_WINDOW`` nights centred on each night, row by row (no NaNs).

    An odd window's median is its middle value once sorted: every night's window is sorted at
    once by a sorting network (odd-even transposition: elementwise minima and maxima of
    neighbours, as many rounds as values), the same value as numpy's median of each window.
    """
    width = values.shape[1] - DIP_WINDOW + 1
    nights = [values[:, i : i + width] for i in range(DIP_WINDOW)]
    for parity in range(DIP_WINDOW):
        for low in range(parity % 2, DIP_WINDOW - 1, 2):
            high = low + 1
            nights[low], nights[high] = (
                np.minimum(nights[low], nights[high]),
                np.maximum(nights[low], nights[high]),
            )
    middle: FloatArray = nights[DIP_WINDOW // 2]
    return middle


def _blocks(cleaned: list[FloatArray]) -> list[_DipBlock]:
    """The NaN-free histories grouped by length, each group's deviations computed at once.

    The same figures as ``deviations`` row by row: the median of each odd window is its
    middle value, the same float whichever way it is taken.
    """
    by_length: dict[int, list[int]] = {}
    for i, values in enumerate(cleaned):
        by_length.setdefault(values.size, []).append(i)
    blocks = []
    for size, rows in by_length.items():
        values = np.stack([cleaned[i] for i in rows]) if size else np.empty((len(rows), 0))
        blocks.append(_DipBlock(rows, values, _block_deviations(values)))
    return blocks


def _block_deviations(values: FloatArray) -> FloatArray | list[FloatArray]:
    if values.shape[1] < max(MIN_DIP_NIGHTS, DIP_WINDOW):
        return np.empty((values.shape[0], 0))
    centred = _window_medians(values)
    middle = values[:, DIP_WINDOW // 2 : values.shape[1] - DIP_WINDOW // 2]
    if np.all(centred != 0):
        devs: FloatArray = np.abs(middle / centred - 1)
        return devs
    return [deviations(row) for row in values]


def beyond_own_dips(level: Level, value: float, own: OwnDips, opts: GateOptions) -> bool:
    """Whether ``value``'s change is far larger than any one-night deviation the kernel showed.

    ``own``: the kernel's (``own_dips``; unknown: never beyond). The change must also be as
    far beyond noise as a failure at once needs (``fail_at_once_z``) and at least
    ``min_effect``, so a kernel too quiet to have strayed at all does not fail on noise; and
    ``value`` must lie outside every night of the history.
    """
    dip = own.largest
    if not math.isfinite(dip) or not level.level or own.low <= value <= own.high:
        return False
    change = abs(value / level.level - 1)
    far = abs(level.z(value)) >= opts.fail_at_once_z
    return far and change >= opts.min_effect and change > DIP_MULTIPLE * dip
