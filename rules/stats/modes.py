"""Two-level kernels: a history that visits two levels is a mixture, not a series of changes.

A GPU runner with two clock (or memory) states puts a kernel at one of two levels and keeps
it there for a while: 62% of roof for a few nights, 71% for a few more, and back. Judged
against one level, every stay at the other mode looks like a change of level, and the gate
confirms it. So the nights before the newest are read as a mixture of two modes
(``two_modes``): the best split of their sorted values in two (the least sum of squares within
the two parts), kept only when

* each mode holds at least ``MIN_MODE_SHARE`` of the nights and ``MIN_MODE_NIGHTS`` of them,
* the modes are at least ``MODE_SEPARATION`` within-mode spreads apart (the pooled scaled MAD
  around each night's mode: a mode's own spread, not the mixture's), and as many times
  ``MODE_DIFF_SHARE`` of the night-to-night noise (one noisy level split in two has parts
  about half its noise wide, a sticky runner's nights mostly follow a night at the same
  mode), and each mode's own spread is at most ``MODE_SPREAD`` times the pooled spread
  (scattered bad nights are no mode),
* the history went from one mode to the other at least ``MIN_SWITCHES`` times in time order
  (one switch is a change of level, the detector's business, not a mixture).

On a two-level kernel a night is off the modes beyond both of them: past the outer mode on its
side by ``AT_MODE_Z`` within-mode spreads (``modes.Modes.beyond``), or between them and
``MODE_OFF_Z`` spreads from each, the modes read from ``MODE_LEVEL_HISTORY`` nights with
``MODE_OFF_SWITCHES`` switches (``Modes.off``: a drop smaller than the gap moves the high mode
between the two). A night at a mode or near one is no suspect, and a run that would confirm a
change is a stay at a mode unless every night of it is off the modes (``at_a_mode``). A run
beyond both modes of its segment is judged against the outer mode in the within-mode noise
(``rules.stats.modelevel``): the segment's noise holds the kernel's own switching (a real runner
alternating 0 / +9% had 3.9% of it and 1.6% within a mode; a 9% drop below both modes read z
-2.3 in the one). Its nights agree in that noise, and a run at a mode of the whole window read
in it is still a stay, as is a run at a mode of its own segment (``segment_modes``: a window
that holds a change before the segment mixes three levels and reads none).
(Which mode dominates, the share, is described, not judged: on a sticky runner the stays,
not the nights, are the samples, and 60 nights hold too few of them.)

A young runner has visited its other mode too rarely for two modes (``MIN_SWITCHES``): two
nights at 62%, six at 71%, and back at 62%. The history is then read with the run's first
night too, and the run is a stay when the kernel stayed at that mode ``MIN_MODE_STAY`` nights
in a row before, for no longer than ``MODE_STAY_RATIO`` times its longest stay at the other
mode (``back_at_a_mode``: the stay lengths say it alternates). A kernel back at a level it
held for long before it rose is not one that alternates: that run is judged as before.

Short histories (fewer than ``MIN_MODE_HISTORY`` nights) and constant ones have no modes: they
are judged as before.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass

import numpy as np

from rules.stats.constants import (
    AT_MODE_WORDS,
    AT_MODE_Z,
    MAD_SCALE,
    MIN_MODE_HISTORY,
    MIN_MODE_NIGHTS,
    MIN_MODE_SHARE,
    MIN_MODE_STAY,
    MIN_SWITCHES,
    MODE_CARRY_SEPARATION,
    MODE_DIFF_SHARE,
    MODE_LEVEL_HISTORY,
    MODE_OFF_SWITCHES,
    MODE_OFF_Z,
    MODE_SEPARATION,
    MODE_SPREAD,
    MODE_STAY_RATIO,
    MODE_STAY_Z,
    ONE_VISIT_STAYS,
)
from rules.stats.options import GateOptions
from rules.stats.robust import BoolArray, FloatArray, IntArray, fast_median


@dataclass(frozen=True)
class Modes:
    """The two levels a kernel's history visits.

    Attributes:
        low: The lower mode (the median of its nights).
        high: The higher mode.
        low_share: Share of the nights at the low mode.
        spread: Within-mode spread of one night (pooled scaled MAD around each night's mode).
        stays: Stays in one mode (runs of nights at one mode, in time order).
        nights: Nights the modes were read from.
    """

    low: float
    high: float
    low_share: float
    spread: float
    stays: int
    nights: int

    def nearest(self, value: float) -> float:
        """The mode nearest ``value``."""
        return self.low if abs(value - self.low) <= abs(value - self.high) else self.high

    def beyond(self, value: float, sign: int) -> bool:
        """Whether ``value`` is off both modes on side ``sign`` (-1: below the low mode).

        Past the outer mode on that side by ``AT_MODE_Z`` within-mode spreads: not a stay at
        one of the two levels.
        """
        edge = self.low if sign < 0 else self.high
        return sign * (value - edge) >= AT_MODE_Z * self.spread

    def off(self, value: float, sign: int) -> bool:
        """Whether ``value`` is at neither mode (side ``sign``), as ``at_a_mode`` reads it.

        ``beyond`` both, or between them and ``MODE_OFF_Z`` within-mode spreads from each,
        where the modes are read from ``MODE_LEVEL_HISTORY`` nights or more with
        ``MODE_OFF_SWITCHES`` switches. A drop smaller than the gap moves the high mode between
        the two; its nights are at neither level the runner lives at. Two switches make a
        mixture that excuses a run at a mode; to call a run between the modes a change the
        runner must have alternated more (a change with a burst after it reads as two modes
        with three stays).
        """
        if self.beyond(value, sign):
            return True
        near = MODE_OFF_Z * self.spread
        alternates = self.nights >= MODE_LEVEL_HISTORY and self.stays - 1 >= MODE_OFF_SWITCHES
        return alternates and self.low + near <= value <= self.high - near

    def holds(self, run: FloatArray, sign: int) -> bool:
        """Whether ``run`` (side ``sign``) is at the mode on that side.

        Its median within ``AT_MODE_Z`` spreads of it: for carried modes (``carried``), a run
        at the other mode, not merely between the modes.
        """
        other = self.low if sign < 0 else self.high
        return abs(float(np.median(run)) - other) <= AT_MODE_Z * self.spread

    def is_low(self, value: float) -> bool:
        """Whether ``value`` is nearer the low mode."""
        return self.nearest(value) == self.low


def best_split(ordered: FloatArray, least: int) -> IntArray:
    """Where each sorted row of ``ordered`` (its last axis) splits best in two.

    The least sum of squares within the two parts, each of ``least`` values or more; one row
    or many (``rules.stats.modescreen``) with the same sums.
    """
    n = ordered.shape[-1]
    total, squares = np.cumsum(ordered, axis=-1), np.cumsum(ordered**2, axis=-1)
    i = np.arange(least, n - least + 1)
    left = squares[..., i - 1] - total[..., i - 1] ** 2 / i
    rest = total[..., -1:] - total[..., i - 1]
    right = (squares[..., -1:] - squares[..., i - 1]) - rest**2 / (n - i)
    return np.asarray(i[np.argmin(left + right, axis=-1)])


def _mad(values: FloatArray, center: float) -> float:
    return MAD_SCALE * fast_median(np.abs(values - center))


def _night_to_night(history: FloatArray) -> float:
    """The noise of one night read from night-to-night differences (scaled MAD / sqrt 2).

    On a sticky two-level runner most nights follow a night at the same mode, so this is the
    within-mode noise; one level split in two has within-part spreads of about half its noise,
    and this says how far its "modes" really are apart.
    """
    return MAD_SCALE * fast_median(np.abs(np.diff(history))) / math.sqrt(2)


def two_modes(history: FloatArray, floor: float = 0.0) -> Modes | None:
    """The two modes of ``history`` (oldest first), or None when it is not two-level.

    ``floor``: the least relative within-mode spread assumed (the gate's ``noise_floor``).
    """
    n = history.size
    least = max(MIN_MODE_NIGHTS, math.ceil(MIN_MODE_SHARE * n))
    if n < MIN_MODE_HISTORY or 2 * least > n:
        return None
    ordered = np.sort(history)
    if ordered[0] == ordered[-1]:
        return None
    cut = int(best_split(ordered, least))
    low, high = fast_median(ordered[:cut]), fast_median(ordered[cut:])
    is_low = history < (low + high) / 2
    resid = np.where(is_low, history - low, history - high)
    spread = max(MAD_SCALE * fast_median(np.abs(resid)), floor * abs(fast_median(history)))
    own = max(_mad(ordered[:cut], low), _mad(ordered[cut:], high))
    stays = 1 + int(np.count_nonzero(is_low[1:] != is_low[:-1]))
    unit = max(spread, MODE_DIFF_SHARE * _night_to_night(history))
    if not spread > 0 or high - low < MODE_SEPARATION * unit or own > MODE_SPREAD * spread:
        return None
    if stays - 1 < MIN_SWITCHES:
        return None
    return Modes(low, high, float(np.mean(is_low)), spread, stays, n)


def at_a_mode(
    values: FloatArray,
    k: int,
    sign: int,
    opts: GateOptions,
    start: int = 0,
    level: float = 0.0,
    spread: float | None = None,
) -> bool:
    """Whether the ``k``-night run at the end of ``values`` (side ``sign``) is a stay at a mode.

    On a two-level history (the nights before the run) a run is a change only when every night
    of it is off the modes (``Modes.off``); read only for a run that confirms otherwise (few).
    In a segment that starts at ``start`` (a change since, the segment at ``level``) its own
    modes are read too (``segment_modes``), and the modes of the nights before it are carried to
    it (``carried``). A history whose other mode was visited too rarely to be two-level on its
    own is read with the run's first night too (``back_at_a_mode``). ``spread``: the within-mode
    noise a run judged against a mode of its segment was judged in (``modelevel.mode_level``);
    the history's modes are read in it too (a window that holds older levels reads its modes
    wider than they are).
    """
    history = values[: values.size - k]
    run = values[values.size - k :]
    modes = two_modes(history, opts.noise_floor)
    if modes is not None and spread is not None:
        modes = dataclasses.replace(modes, spread=spread)
    for read in (modes, segment_modes(history, start, opts)):
        if read is not None and not all(read.off(float(v), sign) for v in run):
            return True
    if start >= MIN_MODE_HISTORY:
        moved = carried(values[:start], level, sign, opts)
        if moved is not None and moved.holds(run, sign):
            return True
    return modes is None and back_at_a_mode(history, run, sign, opts)


def segment_modes(history: FloatArray, start: int, opts: GateOptions) -> Modes | None:
    """The modes of the segment of ``history`` from ``start``, where they are read well.

    A window that holds a change before the segment mixes three levels or more and reads no
    modes, and the nights before the change may be one level: neither says the segment's
    runner alternates. From ``MODE_LEVEL_HISTORY`` nights, as ``modelevel`` reads them (a
    short segment holding a burst reads the burst as a mode: a bursty drop of 10% was lost).
    """
    if not start or history.size - start < MODE_LEVEL_HISTORY:
        return None
    return two_modes(history[start:], opts.noise_floor)


def carried(before: FloatArray, level: float, sign: int, opts: GateOptions) -> Modes | None:
    """The modes of the nights ``before`` a segment carried to its ``level`` (side ``sign``).

    A change moves both modes of a two-level runner by the same factor, so their ratio holds:
    the segment is at the mode on the run's far side (below a drop: the high mode) and the
    other mode is ``level`` times their ratio (or over it), its spread scaled alike. Only modes
    ``MODE_CARRY_SEPARATION`` spreads apart are carried: a noisy level with a small step passes
    for two modes close together, and carried across a change its return reads as a stay.
    """
    modes = two_modes(before, opts.noise_floor)
    if (
        modes is None
        or not level > 0
        or modes.high - modes.low < MODE_CARRY_SEPARATION * modes.spread
    ):
        return None
    if abs(level - modes.nearest(level)) <= AT_MODE_Z * modes.spread:
        # The segment sits at one of the modes: the runner switched state, nothing moved
        # (carried, a segment at the low mode read as the high one, and a real drop below
        # both modes as a stay at a low mode a gap below the old one).
        return modes
    ratio = modes.low / modes.high
    scale = level / (modes.high if sign < 0 else modes.low)
    low, high = (level * ratio, level) if sign < 0 else (level, level / ratio)
    return Modes(low, high, modes.low_share, modes.spread * scale, modes.stays, modes.nights)


def back_at_a_mode(history: FloatArray, run: FloatArray, sign: int, opts: GateOptions) -> bool:
    """Whether ``run`` goes back to a mode the history stayed at before (a sticky runner).

    The history with the run's first night is two-level, the run is not off both modes (as in
    ``at_a_mode``) and its nights are nearest one mode, every night of the history is within
    ``AT_MODE_Z`` spreads of a mode (a runner with two clock states lives at them; a bursty
    kernel's bursts lie at neither), and the history stayed at the run's mode ``MIN_MODE_STAY``
    nights in a row before, for no longer than ``MODE_STAY_RATIO`` times its longest stay
    elsewhere (a kernel that alternates, not one back at the level it held for long before it
    left for a new one: that is a change, as before), a stay it left, at one level: the stay's
    nights within ``MODE_STAY_Z`` spreads of each other and its median within as many of the
    run's (a burst at a drop's depth scatters, or lies at another depth than the drop).
    """
    modes = two_modes(np.append(history, run[0]), opts.noise_floor)
    if modes is None:
        return False
    low = modes.is_low(float(run[0]))
    if all(modes.beyond(float(v), sign) for v in run) or any(
        modes.is_low(float(v)) != low for v in run
    ):
        return False
    near = AT_MODE_Z * modes.spread
    at = np.abs(history - (modes.low if low else modes.high)) <= near
    elsewhere = np.abs(history - (modes.high if low else modes.low)) <= near
    if not np.all(at | elsewhere):
        return False
    here, there = stays(at)
    longest_there = max((end - first for first, end in there), default=0)
    level, tight = float(np.median(run)), MODE_STAY_Z * modes.spread
    return any(
        end < history.size  # the kernel left that stay: not the run's own first nights
        and MIN_MODE_STAY <= end - first <= MODE_STAY_RATIO * longest_there
        and np.ptp(history[first:end]) <= tight
        and abs(np.median(history[first:end]) - level) <= tight
        for first, end in here
    )


def stays(at: BoolArray) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The stays where ``at`` holds, and those where it does not (first, end; time order)."""
    edges = [int(i) + 1 for i in np.flatnonzero(at[1:] != at[:-1])]
    bounds = [0, *edges, at.size]
    here: list[tuple[int, int]] = []
    there: list[tuple[int, int]] = []
    for first, end in itertools.pairwise(bounds):
        (here if at[first] else there).append((first, end))
    return here, there


def mode_words(modes: Modes, value: float, unit: str = "% of roof", when: str = "tonight") -> str:
    """The mixture in words, for a value at one of the modes (or near one, below or above it).

    ``alternates between 62% and 71% of roof; tonight 62%, the usual low mode``: values to
    whole units, the unit's first character after each lone value.
    """
    mode = f"the usual {'low' if modes.is_low(value) else 'high'} mode"
    off = _off(modes, value)
    return (
        f"alternates between {modes.low:.0f}{unit[:1]} and {modes.high:.0f}{unit}; "
        f"{when} {value:.0f}{unit[:1]}, {f'{off} {mode}' if off else mode}"
    )


def _off(modes: Modes, value: float) -> str:
    """``below`` or ``above`` the nearest mode, when ``value`` is not at it (else empty)."""
    off = value - modes.nearest(value)
    if abs(off) <= AT_MODE_WORDS * modes.spread:
        return ""
    return "below" if off < 0 else "above"


def visited_once(modes: Modes, run: int = 1) -> bool:
    """Whether the history visited one of its levels once only: a change and its undoing.

    A regression and its fix read as two modes to the mixture; so does a two-state runner's
    first visit to its other state. Back at that level, the values cannot tell them apart.
    ``run``: the nights in a row at that level again, tonight's included; the modes were read
    without tonight, so the others are the last of their stays, not a visit before.
    """
    return modes.stays - (1 if run > 1 else 0) <= ONE_VISIT_STAYS


def visit_words(modes: Modes, value: float, unit: str = "% of roof", when: str = "tonight") -> str:
    """``tonight 64%, at the 64% it held once before (85% of roof otherwise)`` (or below it)."""
    at, other = (modes.low, modes.high) if modes.is_low(value) else (modes.high, modes.low)
    return (
        f"{when} {value:.0f}{unit[:1]}, {_off(modes, value) or 'at'} the {at:.0f}{unit[:1]} "
        "it held once before "
        f"({other:.0f}{unit} otherwise)"
    )
