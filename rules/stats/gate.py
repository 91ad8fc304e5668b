"""The gate: confirmed level changes at night, screen / re-measure / decide on a pull request.

One measurement cannot tell a one-night dip from a real drop, so neither gate fails on one:

* **Nightly** (``judge_latest``): the newest value is judged against the level since the last
  confirmed change (the gate's own, carried from night to night by ``rules.stats.runs``, or
  the offline detector's, ``rules.stats.levels``). Beyond noise and worse, it is ``suspect``
  (a warning); it is ``regressed`` on the night that makes ``confirm_runs`` nights in a row
  beyond noise on the same side, or a run of up to ``pool_runs`` nights whose evidence
  together is as strong (a moderate drop on a noisy kernel). A suspect followed by a normal
  night clears itself; once a change is confirmed, the next nights are judged against the
  new level.
* **Pull request** (``judge_measurement`` in ``rules.stats.pr``): the PR's value against the
  base branch's current level. Worse beyond noise: a suspect. With re-measurements of the
  same commit it is ``regressed`` only when the re-measurement *on its own* is beyond noise
  as well (the conservative median of the re-measurements: with two, the better one).
  Without a re-measure step, only effects far beyond noise (``fail_at_once_effect`` at
  ``fail_at_once_z``) fail at once.

**Fleet-scale error control (family-wise).** A verdict judges thousands of kernels and fails
if *any* fails, so the error that matters is the chance that a stable verdict fails at all:
the family-wise error rate, ``family_error`` (5%). Per-value thresholds come from a heavy-
tailed noise model (Student t, ``tail_df`` degrees of freedom, scaled to the robust spread):

* nightly: every night of a ``k``-night run must pass the bar that ``k`` stable nights all
  pass with chance ``family_error / kernels / run lengths tried`` (Bonferroni over kernels
  and run lengths; the nights share the level and the noise estimate, ``rules.stats.joint``);
* PR: the re-measurement is fresh data, tested only for the suspects, so it needs
  ``family_error / suspects`` (Bonferroni over the suspects re-measured, valid whatever
  the screen selected).

``z_threshold`` is the floor of the PR's thresholds, ``nightly_floor`` of the nightly one.
Why family-wise rather than a false-discovery rate: on a stable PR every flagged kernel is a
false one, and there FDR control equals FWER control anyway; when kernels really regressed,
Benjamini-Hochberg lowers the bar for the others too. On the fleet benchmark's training seed
it found more of many drops in one PR (20% drops, 10 per PR: 87% -> 93%) and failed a stable
kernel beside them twice as often (2.1% -> 4.2% of such PRs); on stable PRs the two are level
(``tests/bench/bench_fleet.py`` reports both).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

import numpy as np
import numpy.typing as npt

from rules.stats.batchreplay import pending_runs, replayed_many
from rules.stats.constants import (
    DF_DECIMALS,
    MARGINAL_NOISE_EFFICIENCY,
    MIN_DF,
    NIGHTLY_SE_STEPS,
)
from rules.stats.joint import joint_z
from rules.stats.levels import Level, clean, level_of, segment_starts
from rules.stats.levelsmany import levels_without
from rules.stats.modes import Modes, two_modes
from rules.stats.options import GateOptions
from rules.stats.robust import FloatArray, t_robust_spread
from rules.stats.runs import Replay, Step, pending_step, replay, step


@lru_cache(maxsize=256)
def stage_z(tail: float, df: float) -> float:
    """Robust-z threshold a t(``df``) noise exceeds (one-sided) with probability ``tail``.

    The t is scaled to its robust spread (scaled MAD), the unit every z here is in.
    """
    from scipy.special import stdtrit  # the t quantile; scipy.stats would cost seconds to import

    return float(stdtrit(df, 1 - tail) / t_robust_spread(df))


def effective_df(opts: GateOptions, points: int = 0) -> float:
    """Degrees of freedom of the noise model, widened for a noise estimated from ``points``.

    A standardised value with an estimated scale is t-distributed with the scale's degrees
    of freedom; heavy tails and that estimate combine here as harmonic degrees of freedom
    (0 points: the tails alone; the estimate's per point: ``MARGINAL_NOISE_EFFICIENCY``).
    Rounded, so thresholds are computed once per value.
    """
    if points < 2:
        return opts.tail_df
    combined = 1 / (1 / opts.tail_df + 1 / (MARGINAL_NOISE_EFFICIENCY * (points - 1)))
    return round(max(combined, MIN_DF), DF_DECIMALS)


def nightly_z(opts: GateOptions, points: int = 0, se: float = 0.0) -> float:
    """Per-night threshold: ``confirm_runs`` nights must all pass, over ``family_size`` kernels.

    The nights share the level (standard error ``se`` noise units) and the noise estimate
    (from ``points``), so their joint chance is what is controlled (``rules.stats.joint``).
    """
    tail = opts.family_error / opts.family_size
    se = round(se * NIGHTLY_SE_STEPS) / NIGHTLY_SE_STEPS  # fewer thresholds to compute
    joint = joint_z(tail, opts.confirm_runs, opts.tail_df, points, se)
    return max(opts.nightly_floor, joint)


def confirm_z(opts: GateOptions, points: int = 0) -> float:
    """Threshold of a PR re-measurement, Bonferroni over the ``family_size`` re-measured."""
    tail = opts.family_error / opts.family_size
    return max(opts.z_threshold, stage_z(tail, effective_df(opts, points)))


@dataclass(frozen=True)
class Judgement:
    """What the gate decided about the newest value(s) of one series, with its numbers.

    Attributes:
        regressed: Confirmed worse beyond noise (fails the verdict).
        suspect: Worse beyond noise but not confirmed (a warning that names it).
        improved: Confirmed better beyond noise (on a PR, with nothing to confirm it: far
            beyond noise, ``fail_at_once_effect`` at ``fail_at_once_z``).
        level: What the newest value was judged against (the current segment's level).
        relative_change: ``(current - level) / level``.
        current: The value judged (the newest, or the PR's measurement).
        noise: Noise of one value used (value units, floored).
        z: Robust z of ``current`` against ``level``.
        z_threshold: Threshold ``z`` had to reach.
        n: Points in the current segment.
        segment_start: Index (NaN-free series) where the current segment starts.
        run: Values in a row beyond noise on the same side, the newest included (0: none).
        confirm_runs: Values in a row that confirm a change.
        enough: Whether there was enough history (``min_runs``) to judge.
        remeasured: The re-measurements (PR gate), in the order given.
        remeasured_z: Robust z of their conservative median (NaN without).
        confirm_threshold: Threshold the re-measurement had to reach (NaN without).
        method: Name of the test.
        modes: The two levels the history visits, when it is two-level and the newest value,
            beyond noise, lies at one of them (``rules.stats.modes``; it is no suspect).
    """

    regressed: bool
    suspect: bool
    improved: bool
    level: float
    relative_change: float
    current: float
    noise: float
    z: float
    z_threshold: float
    n: int
    segment_start: int
    run: int
    confirm_runs: int
    enough: bool
    remeasured: tuple[float, ...] = ()
    remeasured_z: float = math.nan
    confirm_threshold: float = math.nan
    method: str = "segment level, robust z, confirmed runs"
    modes: Modes | None = None


def current_level(
    history: FloatArray,
    start: int,
    noise: float,
    opts: GateOptions,
    before: Replay | None = None,
) -> tuple[Level, int]:
    """The level the next value is judged against, and the pending run (signed) behind it.

    ``start`` is where the detector's last change starts; the gate's own last confirmed
    change (``replay``) starts the segment when it is later. ``before``: the nightly gate's
    replay of ``history[:-1]`` (``replay`` says what it saves).
    """
    return level_after(history, replay(history, opts, start, before=before), noise, opts)


def level_after(
    history: FloatArray, start: int, noise: float, opts: GateOptions
) -> tuple[Level, int]:
    """``current_level`` once the segment's start is known (the replay's, one or many rows).

    The newest night is judged in the segment; nights of a pending run (beyond noise on one
    side, not yet confirmed) are left out of the level.
    """
    judged = step(history, start, noise, opts)
    if judged.moves_start:
        start, run = history.size - judged.run, 0
    else:
        run = judged.run * int(np.sign(judged.z)) if judged.run else 0
    return level_of(history[: history.size - abs(run)], start, noise, opts.noise_floor), run


def judge_from(
    values: FloatArray,
    start: int,
    noise: float,
    opts: GateOptions,
    up: bool,
    judged: Step | None = None,
) -> Judgement:
    """Judge the newest of ``values`` in the segment from ``start`` (``rules.stats.runs``).

    ``judged``: ``step``'s reading of the newest night, when known.
    """
    judged = judged or step(values, start, noise, opts)
    level, newest = judged.level, float(values[-1])
    enough = values.size > opts.min_runs and math.isfinite(level.level) and level.level != 0
    thr = nightly_z(opts, level.points, level.se) if enough else math.nan
    z = level.z(newest) if enough else math.nan
    worse = enough and z * (1 if up else -1) < 0
    beyond = enough and abs(z) >= thr and abs(newest / level.level - 1) >= opts.min_effect
    confirmed = enough and judged.sign != 0
    # A night judged against a mode (``runs.Step.moded``) is off both modes of its segment.
    read = beyond and not confirmed and not judged.moded and not judged.returned
    modes = two_modes(values[:-1], opts.noise_floor) if read else None
    at_mode = modes is not None and not modes.off(newest, int(np.sign(z)))
    return Judgement(
        regressed=confirmed and worse,
        suspect=worse and beyond and not confirmed and not at_mode,
        improved=confirmed and not worse,
        level=level.level,
        relative_change=(newest - level.level) / level.level if enough else math.nan,
        current=newest,
        noise=level.noise,
        z=z,
        z_threshold=thr,
        n=level.n,
        segment_start=level.start,
        run=judged.run,
        confirm_runs=opts.confirm_runs,
        enough=enough,
        modes=modes if at_mode else None,  # a night past both modes is not "the usual" one
    )


def judge_latest_many(
    series: Sequence[npt.ArrayLike],
    *,
    higher_is_better: bool = True,
    options: GateOptions | None = None,
) -> list[Judgement]:
    """``judge_latest`` for many series at once (one change-point scan for all of them)."""
    return judge_latest_replayed(series, higher_is_better=higher_is_better, options=options)[0]


def judge_latest_replayed(
    series: Sequence[npt.ArrayLike],
    *,
    higher_is_better: bool = True,
    options: GateOptions | None = None,
) -> tuple[list[Judgement], list[Replay | None]]:
    """``judge_latest_many`` and each series' replay (None for an empty one).

    The replays are the nights the nightly check's ``current_levels(series)`` would judge
    again for the next PR's levels: it takes them as ``replays``.
    """
    opts = options or GateOptions()
    rows = [clean(s) for s in series]
    starts, noise = segment_starts([r[:-1] for r in rows], opts.confirm_runs)
    replays = _replays(rows, starts, opts)
    # A series of one value (a new kernel's, all of a first run's) has no level to judge it
    # against: what ``judge_from`` says of it, without a step for each of 2,000 kernels.
    full = [i for i, r in enumerate(rows) if r.size > 1]
    begun = [cast(Replay, replays[i]).start for i in full]
    steps = _steps([rows[i] for i in full], begun, noise[full], opts)
    judged = [_unjudged(opts)] * len(rows)
    for i in (i for i, r in enumerate(rows) if r.size == 1):
        judged[i] = _unjudged(opts, float(rows[i][0]))
    for i, start, one in zip(full, begun, steps, strict=True):
        judged[i] = judge_from(rows[i], start, float(noise[i]), opts, higher_is_better, one)
    return judged, replays


def _steps(
    rows: list[FloatArray], starts: list[int], noise: FloatArray, opts: GateOptions
) -> list[Step | None]:
    """``step`` of each row's newest night where no run confirms for sure, else None.

    The levels of the nights before the runs (``pending_runs``) are computed together
    (``levels_without``); the other rows are left to ``step``.
    """
    pending = pending_runs(rows, starts, noise, opts)
    before = [None if run is None else max(run, 1) for run in pending]
    levels = levels_without(rows, starts, noise, opts.noise_floor, before)
    return [
        None if run is None or level is None else pending_step(row, level, run)
        for row, run, level in zip(rows, pending, levels, strict=True)
    ]


def _replays(rows: list[FloatArray], starts: list[int], opts: GateOptions) -> list[Replay | None]:
    """The replay of each row without its newest value (None for an empty row), all at once."""
    full = [i for i, r in enumerate(rows) if r.size]
    done = replayed_many([rows[i][:-1] for i in full], opts, [starts[i] for i in full])
    replays: list[Replay | None] = [None] * len(rows)
    for i, one in zip(full, done, strict=True):
        replays[i] = one
    return replays


def judge_latest(
    series: npt.ArrayLike, *, higher_is_better: bool = True, options: GateOptions | None = None
) -> Judgement:
    """Whether the newest value of ``series`` (oldest first, newest last) is a regression.

    Args:
        series: One kernel's values in time order; the last one is judged (NaNs ignored).
        higher_is_better: Percent of roof: True. Time: False.
        options: Thresholds, ``confirm_runs`` and the family size (``GateOptions`` defaults).

    Returns:
        A ``Judgement``: ``suspect`` when the newest value is worse beyond noise but not yet
        confirmed, ``regressed`` (or ``improved``) on the value that confirms the change.
    """
    return judge_latest_many([series], higher_is_better=higher_is_better, options=options)[0]


def _unjudged(opts: GateOptions, current: float = math.nan) -> Judgement:
    """No level to judge by: an empty series, or ``judge_from`` of a lone value (``current``).

    Nothing is beyond the noise or confirmed (``NO_LEVEL``).
    """
    nan = math.nan
    return Judgement(
        False, False, False, nan, nan, current, nan, nan, nan, 0, 0, 0, opts.confirm_runs, False
    )
