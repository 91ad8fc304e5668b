"""Nightly confirmation: a change is a run of nights beyond noise, judged as a whole.

Two nights each far beyond noise confirm a large change. A moderate change on a noisy kernel
(a 25% drop at 8% noise: 3 noise units a night) is rarely beyond a single-night bar twice in
a row, but four such nights together are far beyond noise. So a run of ``k`` nights
(``confirm_runs`` to ``pool_runs``) confirms a change when

* every night of it is beyond ``run_floor`` on the same side (a normal night breaks a run,
  so a one-night dip clears itself), and beyond the family-wise bar for ``k`` nights that
  all exceed it (``rules.stats.joint``, Bonferroni over the run lengths tried), and
* its pooled evidence, the sum of ``min(z, nightly_floor) - pool_allowance`` over its nights
  (a CUSUM; a night counts at most the floor, so one clock dip cannot carry a run), reaches
  what ``confirm_runs`` nights at the floor give. The z are calibrated first: a noise
  estimated from few nights is often far too low, so on a young history they are scaled
  down to what they would be with a noise known from ``KNOWN_NOISE_POINTS`` nights; and
  nights are not independent on a real runner, so they are divided by how much wider the
  segment's own sums of as many nights spread than independent noise would (``sum_spread``).

The run is judged against the level of the segment before it; on a two-level segment, a run
past both modes against the mode on its side, in the within-mode noise
(``modelevel.mode_level``: the segment's noise holds the kernel's switching). The segment is
the state the gate carries from night to night (``replay``): where its last confirmed change
started, so a change confirmed once is not forgotten when later nights widen the old
segment's spread. A run that goes back to the level before a segment holding stray nights (a
burst confirmed, then the nights after it), or before a young segment whose level before was
one the kernel held (a regression fixed), is a return, not a change (``_returns``,
``_back_to``). The latter also ends the segment it left, so the nights after a fix are judged
against the fixed level, not a mixture of it and the regression.

The fixed numbers (``MIN_LEVEL``, ``SETTLED``, ``KNOWN_NOISE_POINTS``, the ``SUM_*`` of
``sum_spread``, ``REPLAY_NIGHTS``, ``POINT_GRID``) are in ``rules.stats.constants``, each with
the benchmark that chose it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from rules.stats.bursts import agrees, bursts
from rules.stats.constants import (
    KNOWN_NOISE_POINTS,
    MAD_SCALE,
    MIN_FIRST,
    MIN_LEVEL,
    POINT_GRID,
    REPLAY_NIGHTS,
    RETURN_STRAY_Z,
    RUN_SE_STEPS,
    SETTLED,
    SUM_CLIP,
    SUM_LOWER,
    SUM_MIN_POINTS,
    SUM_SHRINK,
)
from rules.stats.joint import all_beyond, joint_z
from rules.stats.levels import Level, level_of
from rules.stats.modelevel import mode_level
from rules.stats.modes import at_a_mode
from rules.stats.options import ChangePointOptions, GateOptions
from rules.stats.robust import FloatArray, fast_median


@dataclass(frozen=True)
class Step:
    """The gate's reading of the newest night of a series.

    Attributes:
        sign: +1 / -1 when a change upwards / downwards is confirmed on this night, else 0.
        run: Nights of the run that ends with the newest night (0: the newest is normal).
        level: The level the newest night was judged against (the nights before its run).
        z: Robust z of the newest night against ``level``.
        moded: Whether ``level`` is a mode of a two-level segment, the run past both modes
            (``modelevel.mode_level``: the mode on its side, in the within-mode noise).
        returned: The run went back to the level before the segment (``_back_to``): no
            change, but the segment it left ends, and the run starts the next one; ``level``
            is the one it went back to.
    """

    sign: int
    run: int
    level: Level
    z: float
    moded: bool = False
    returned: bool = False

    @property
    def moves_start(self) -> bool:
        """Whether the run starts a new segment: a confirmed change, or a return."""
        return self.sign != 0 or self.returned


@lru_cache(maxsize=512)
def evidence_scale(points: int, confirm_runs: int, df: float, floor: float) -> float:
    """How far a z against a noise estimated from ``points`` nights overstates the evidence.

    The factor by which the nightly floor must rise for ``confirm_runs`` stable nights to
    pass it as rarely as they pass the floor when the noise is estimated from
    ``KNOWN_NOISE_POINTS`` nights (the joint model of ``rules.stats.joint``); at least 1.
    """
    reference = all_beyond(floor, confirm_runs, df, KNOWN_NOISE_POINTS, 0.0)
    known = joint_z(reference, confirm_runs, df, min(points, KNOWN_NOISE_POINTS), 0.0)
    return max(1.0, known / floor)


def _evidence_scale(opts: GateOptions, points: int) -> float:
    return evidence_scale(points, opts.confirm_runs, opts.tail_df, opts.nightly_floor)


def each_z(opts: GateOptions, k: int, level: Level) -> float:
    """Bar every night of a ``k``-night run must pass (floored at ``run_floor``)."""
    tries = max(1, opts.pool_runs - opts.confirm_runs + 1)
    tail = opts.family_error / opts.family_size / tries
    se = math.ceil(level.se * RUN_SE_STEPS) / RUN_SE_STEPS  # up (a higher bar), like the points
    joint = joint_z(tail, k, opts.tail_df, fewer_points(level.points), se)
    return max(opts.run_floor, joint)


def fewer_points(points: int) -> int:
    """``points`` rounded down to ``POINT_GRID``."""
    return max(p for p in POINT_GRID if p <= points)


def _signed_z(values: FloatArray, level: Level, sign: int, min_effect: float) -> FloatArray:
    """``sign``-side z of ``values`` (0 where the relative change is under ``min_effect``)."""
    z = sign * (values - level.level) / level.scale
    rel = sign * (values - level.level) / abs(level.level)
    return np.asarray(np.where(rel >= min_effect, z, 0.0), dtype=float)


def _usable(level: Level) -> bool:
    need = MIN_LEVEL if level.start else MIN_FIRST
    return level.n >= need and math.isfinite(level.level) and level.level != 0


def _prior(values: FloatArray, level: Level, noise: float, opts: GateOptions) -> Level | None:
    """The level before the change that started an unsettled segment (None: settled)."""
    if level.start == 0 or level.n >= SETTLED:
        return None
    return level_of(values[: level.start], max(0, level.start - SETTLED), noise, opts.noise_floor)


def _run_confirms(
    values: FloatArray,
    z: FloatArray,
    level: Level,
    sign: int,
    noise: float,
    opts: GateOptions,
    judged: tuple[Level, FloatArray] | None = None,
) -> bool | Level:
    """Whether the run at the end of ``values`` (its ``sign``-side z ``z``) confirms.

    ``judged``: the mode the run is judged against and the segment moved onto it
    (``modelevel.mode_level``), else the segment's ``level``. In an unsettled segment it must
    also confirm against the level before the change, which is computed only for a run that
    confirms against its own. A run that instead goes back to that level (``_back_to``)
    gives it: the segment was a regression fixed, or a burst, and is over.
    """
    end = values.size - z.size
    against, segment = judged or (level, values[level.start : end])
    if not _confirms(z, against, opts, segment):
        return False
    prior = _prior(values, level, noise, opts)
    if prior is None:
        return not _returns(values, z.size, level, noise, opts)
    if not _usable(prior):
        return True
    against_prior = _signed_z(values[end:], prior, sign, opts.min_effect)
    if _confirms(against_prior, prior, opts, values[prior.start : level.start]):
        return True
    if not _held(values[prior.start : level.start], prior, opts):
        return False
    return _back_to(values[end:], prior, opts) or False


def _back_to(run: FloatArray, before: Level, opts: GateOptions) -> Level | None:
    """``before`` when the run's median is within ``nightly_floor`` of its noises of it."""
    back = abs(float(np.median(run)) - before.level)
    return before if back <= opts.nightly_floor * before.scale else None


def _held(nights: FloatArray, level: Level, opts: GateOptions) -> bool:
    """Whether every one of ``nights`` is within ``nightly_floor`` noises of ``level``.

    A level the kernel held, not a noisy stretch whose median a drop can land on (a real
    runner's drop to 0.97 after a noisy week around 1.03 read as a return to it).
    """
    return bool(np.all(np.abs(nights - level.level) <= opts.nightly_floor * level.scale))


def _returns(values: FloatArray, k: int, level: Level, noise: float, opts: GateOptions) -> bool:
    """Whether the ``k``-night run goes back to the level before a settled segment with strays.

    A burst the gate confirmed starts a segment of its slow nights and the nights after it
    (back at the old level): its level is neither, and the run back is beyond it on every
    night. A segment with a night more than ``RETURN_STRAY_Z`` noises off its level is such a
    mix, or a real one; a run there whose median is within ``nightly_floor`` noises of the
    level before the segment (its last ``SETTLED`` nights) is a return, not a change.
    """
    if level.start == 0 or level.n < SETTLED:  # unsettled: ``_prior`` judges it
        return False
    segment = values[level.start : level.start + level.n]
    if bool(np.all(np.abs(segment - level.level) <= RETURN_STRAY_Z * level.scale)):
        return False
    before = level_of(values[: level.start], max(0, level.start - SETTLED), noise, opts.noise_floor)
    if not _usable(before):
        return False
    # No new segment here: the nights before a settled one may be a regression fixed, and
    # a run back at them the regression again (``_back_to`` ends only young segments).
    return _back_to(values[values.size - k :], before, opts) is not None


def lowest_spread(k: int) -> float:
    """The least ``sum_spread`` of a ``k``-night run (a pair's nights each reach the floor)."""
    return SUM_LOWER if k > 2 else 1.0


def sum_spread(segment: FloatArray, level: Level, k: int) -> float:
    """How far the ``k``-night sums of ``segment`` spread beyond independent noise (shrunk)."""
    n = segment.size
    if k < 2 or n < max(SUM_MIN_POINTS, 2 * k) or not level.noise > 0:
        return 1.0
    bound = SUM_CLIP * level.noise
    resid = np.clip(segment - level.level, -bound, bound)
    sums = np.asarray(np.convolve(resid, np.ones(k), mode="valid"), dtype=float)
    spread = MAD_SCALE * fast_median(np.abs(sums - fast_median(sums)))
    ratio = spread / (math.sqrt(k) * level.noise)
    weight = (n / k) / (n / k + SUM_SHRINK)
    return max(lowest_spread(k), 1.0 + weight * (ratio - 1.0))


def _pooled(z: FloatArray, level: Level, opts: GateOptions, spread: float) -> bool:
    """Whether the run's calibrated evidence reaches what ``confirm_runs`` nights give."""
    calibrated = z / (_evidence_scale(opts, level.points) * spread)
    pooled = float(np.sum(np.minimum(calibrated, opts.nightly_floor) - opts.pool_allowance))
    return pooled >= opts.confirm_runs * (opts.nightly_floor - opts.pool_allowance)


def _confirms(z: FloatArray, level: Level, opts: GateOptions, segment: FloatArray) -> bool:
    """Whether a run with these signed z, judged against ``segment``'s level, confirms."""
    if z.size < opts.confirm_runs:
        return False
    # Evidence falls as the spread rises: a run short of the bar at the least spread is
    # short at any, and most runs are, so the segment's sums are computed for few.
    if not _pooled(z, level, opts, lowest_spread(z.size)):
        return False
    if not _pooled(z, level, opts, sum_spread(segment, level, z.size)):
        return False
    return bool(np.min(z) >= each_z(opts, z.size, level))  # the costly bar last


def _kept(
    values: FloatArray, k: int, sign: int, level: Level, opts: GateOptions, mode: Level | None
) -> bool:
    """Whether a run that confirms by its evidence is a change.

    Its nights agree and, short of ``pool_runs`` nights, it is no burst of the kind the
    kernel's history shows (``rules.stats.bursts``); on a two-level kernel its nights are off
    both modes (``rules.stats.modes``). ``mode``: the mode the run is judged against, whose
    within-mode noise its nights agree in and the window's modes are read in.
    """
    run, against = values[values.size - k :], mode or level
    if not agrees(run, against.noise, against.level):
        return False
    own = bursts(values[: values.size - k], sign) if k < opts.pool_runs else None
    if own is not None and not own.outlasts(run, level.level):
        return False
    spread = None if mode is None else mode.noise
    return not at_a_mode(values, k, sign, opts, level.start, level.level, spread)


def step(
    values: FloatArray, start: int, noise: float, opts: GateOptions, first: Level | None = None
) -> Step:
    """Judge the newest of ``values`` in the segment starting at ``start``.

    ``first``: ``level_of(values[:-1], start, noise, opts.noise_floor)`` when already known.
    """
    if first is None:
        first = level_of(values[:-1], start, noise, opts.noise_floor)
    if not _usable(first):
        return Step(0, 0, first, math.nan)
    newest = float(values[-1])
    if abs(first.z(newest)) < opts.run_floor:  # most nights: no run to look at
        return Step(0, 0, first, first.z(newest))
    sign = int(np.sign(newest - first.level))
    judged, run, at_modes = first, 0, False
    for k in range(1, opts.pool_runs + 1):
        level = first if k == 1 else level_of(values[:-k], start, noise, opts.noise_floor)
        if not _usable(level):
            break
        night = values[values.size - k :]
        moded = mode_level(values[start : values.size - k], night, sign, level, opts.noise_floor)
        against = moded[0] if moded else level
        z = _signed_z(night, against, sign, opts.min_effect)
        if not np.all(z >= opts.run_floor):
            break
        judged, run, at_modes = against, k, moded is not None
        confirms = _run_confirms(values, z, level, sign, noise, opts, moded)
        if isinstance(confirms, Level):
            if agrees(night, level.noise, level.level):  # back at the level before: segment over
                return Step(0, k, confirms, confirms.z(newest), returned=True)
        elif confirms and _kept(values, k, sign, level, opts, against if moded else None):
            return Step(sign, k, against, against.z(newest), moded is not None)
    return Step(0, run, judged, judged.z(newest), at_modes)


def pending_step(values: FloatArray, level: Level, run: int) -> Step:
    """``step``'s reading of a newest night where no run confirms and no mode is at stake.

    ``run``: the nights beyond ``run_floor`` up to the newest (0: none); ``level``: the level
    of the nights before them, ``level_of(values[:-max(run, 1)], ...)``.
    """
    return Step(0, run, level, level.z(float(values[-1])) if _usable(level) else math.nan)


#: The detector's noise floor (one options object, not one validated per night judged).
DETECTOR_NOISE_FLOOR = ChangePointOptions().noise_floor


def night_noise(history: FloatArray) -> float:
    """The noise a night is judged with: the detector's (``windows._series_noise``) of ``history``.

    The same formula on one NaN-free row, without the masked-array median that costs 0.7 ms.
    """
    if history.size < 2:
        return math.nan
    sigma = MAD_SCALE * fast_median(np.abs(np.diff(history))) / math.sqrt(2)
    return max(sigma, DETECTOR_NOISE_FLOOR * abs(fast_median(history)))


def segment_starts_by_night(
    values: FloatArray, opts: GateOptions, start: int = 0, since: int = 0
) -> list[int]:
    """Per night ``t`` (and the night after the last), where the gate's segment starts.

    The segment starts at ``start``; every night from ``since`` on is judged as it was on its
    own night (its noise from the nights before it), and a confirmed run starts a new segment
    at its first night. Index ``t`` is the state night ``t`` is judged in, so one pass gives
    every night's state (``len(values) + 1`` entries).
    """
    out = [start] * since
    for t in range(since, values.size):
        out.append(start)
        if t - start < (MIN_LEVEL if start else MIN_FIRST):
            continue
        judged = step(values[: t + 1], start, night_noise(values[:t]), opts)
        if judged.moves_start:
            start = t + 1 - judged.run
    return [*out, start]


@dataclass(frozen=True)
class Replay:
    """The segment starts of one replay, night by night.

    ``states[i]`` is the start night ``since + i`` is judged in; the last, the night after
    the series'.
    """

    since: int
    states: tuple[int, ...]

    @property
    def start(self) -> int:
        """Where the segment starts for the night after the series."""
        return self.states[-1]

    def entered(self, night: int, start: int) -> bool:
        """Whether this replay judged ``night`` in the segment starting at ``start``."""
        i = night - self.since
        return 0 <= i < len(self.states) and self.states[i] == start


def replayed(values: FloatArray, opts: GateOptions, start: int = 0) -> Replay:
    """``replay`` with the state of every night it replayed (for ``replay``'s ``before``)."""
    since = max(start, values.size - REPLAY_NIGHTS)
    return Replay(since, tuple(segment_starts_by_night(values, opts, start, since)[since:]))


def replay(
    values: FloatArray, opts: GateOptions, start: int = 0, *, before: Replay | None = None
) -> int:
    """Where the segment starts for the night after ``values``; ``start`` is the detector's.

    The last ``REPLAY_NIGHTS`` nights are replayed in the detector's segment: the gate's own
    last confirmed change there, or ``start``. ``before``, the replay of ``values[:-1]`` with
    the same ``opts`` (the nightly gate's, judging the newest value), saves replaying the
    nights they share: a night's state is a function of the nights up to it and the state
    it is entered in, so where ``before`` entered the first night to replay in ``start`` it
    judged every night up to the newest as this replay would.
    """
    since = max(start, values.size - REPLAY_NIGHTS)
    if before is not None and before.entered(since, start):
        return segment_starts_by_night(values, opts, before.start, values.size - 1)[-1]
    return segment_starts_by_night(values, opts, start, since)[-1]
