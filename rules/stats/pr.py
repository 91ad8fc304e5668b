"""The PR gate: screen one measurement against the base branch's level, confirm on a re-measure.

See ``rules.stats.gate`` for the protocol and the error control. Modes:

* ``single``: no re-measure step. Suspects are warnings; only effects far beyond noise fail
  at once: ``fail_at_once_effect`` at ``fail_at_once_z``, or a drop far larger than any
  one-night deviation of the kernel's own history (``rules.stats.dips``).
* ``screen``: the caller will re-measure the suspects (``--suspects``): nothing fails on one
  measurement, however large its drop (a one-off 30% dip and a real 30% drop look the same).
* ``confirm``: re-measurements of the same commit are given (``--rerun``): a suspect fails
  when its re-measurement on its own is beyond noise too (``confirm_z`` over the kernels
  re-measured); a suspect whose re-measurement is normal was a one-off and clears.

In every mode a kernel is ``improved`` only when its value is better far beyond noise (the
at-once bar): only suspects are re-measured, so one value is all there is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

import numpy as np
import numpy.typing as npt

from rules.stats.batchreplay import pending_runs, replay_many
from rules.stats.bursts import noise_at
from rules.stats.constants import AT_MODE_Z, MIN_MODE_STAY, QUIET_MARGIN
from rules.stats.dips import OwnDips, beyond_own_dips
from rules.stats.frozen import frozen_from
from rules.stats.gate import (
    Judgement,
    confirm_z,
    effective_df,
    level_after,
    stage_z,
)
from rules.stats.levels import NO_LEVEL, Level, clean, segment_starts
from rules.stats.levelsmany import levels_without
from rules.stats.modes import Modes, stays, two_modes, visited_once
from rules.stats.options import GateOptions
from rules.stats.robust import FloatArray, fast_median
from rules.stats.runs import Replay

GateMode = Literal["single", "screen", "confirm"]


def current_levels(
    histories: Sequence[npt.ArrayLike],
    *,
    options: GateOptions | None = None,
    replays: Sequence[Replay | None] | None = None,
) -> list[Level]:
    """The base branch's current level of each series (what the next value is judged against).

    ``replays``: the nightly gate's replay of each series without its newest value
    (``judge_latest_replayed`` with the same ``options``), so the nights it judged are not
    judged again; the levels are the same with or without. The series are replayed together
    (``rules.stats.batchreplay``), and the levels of those whose newest night certainly
    confirms nothing are computed together (``levels_without``).
    """
    opts = options or GateOptions()
    rows = [clean(h) for h in histories]
    if not rows:
        return []
    starts, noise = segment_starts(rows, opts.confirm_runs)
    before = [None] * len(rows) if replays is None else replays
    judged = [i for i, r in enumerate(rows) if r.size >= opts.min_runs]
    picked = [rows[i] for i in judged]
    begun = replay_many(picked, opts, [starts[i] for i in judged], [before[i] for i in judged])
    pending = pending_runs(picked, begun, noise[judged], opts)
    levels = [NO_LEVEL] * len(rows)
    for i, level in zip(judged, _levels(picked, begun, noise[judged], pending, opts), strict=True):
        levels[i] = level
    return levels


def _levels(
    rows: list[FloatArray],
    starts: list[int],
    noise: FloatArray,
    pending: list[int | None],
    opts: GateOptions,
) -> list[Level]:
    """``level_after``'s level of each row; ``pending``: its run, where none confirms for sure.

    Then it is ``level_of``'s of the row without the run's nights, computed for all those rows
    together (``levels_without``).
    """
    kept = levels_without(rows, starts, noise, opts.noise_floor, pending)
    return [
        level_after(row, start, float(n), opts)[0] if level is None else level
        for row, start, n, level in zip(rows, starts, noise, kept, strict=True)
    ]


def conservative_median(values: Sequence[float], higher_is_better: bool) -> float:
    """The median that is least bad: with two values the better one, so one dip is not enough."""
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if higher_is_better else ordered[(len(ordered) - 1) // 2]


def _judgeable(level: Level, current: float) -> bool:
    """Whether ``current`` can be judged against ``level`` (a finite, non-zero level)."""
    return level.n >= 1 and level.level != 0 and math.isfinite(level.level + current)


def _worse_side(higher_is_better: bool) -> int:
    """The side of the level a worse value lies on (-1: below)."""
    return -1 if higher_is_better else 1


def _side(level: Level, value: float, z_thr: float, opts: GateOptions) -> int:
    """-1 / +1 when ``value`` is beyond noise below / above the level, else 0."""
    z = level.z(value)
    rel = (value - level.level) / abs(level.level)
    return int(math.copysign(1, z)) if abs(z) >= z_thr and abs(rel) >= opts.min_effect else 0


def consistent(level: Level, values: Sequence[float], opts: GateOptions) -> bool:
    """Whether the measurements of one commit agree with each other within noise.

    A real change moves every measurement alike; a noise suspect whose re-measurement hit a
    clock dip (or two unrelated dips) gives values far apart, and each passes its own test.
    The bar is the spread two measurements of one level exceed with ``disagree_error``
    (two-sided) under the noise model, so a real change is rarely lost to it. The noise is
    the level's scaled to the measurements' (``bursts.noise_at``), as the nightly gate's.
    """
    if len(values) < 2 or not level.noise > 0:
        return True
    thr = stage_z(opts.disagree_error / 2, effective_df(opts, level.points))
    noise = noise_at(level.noise, level.level, np.asarray(values, dtype=float))
    return (max(values) - min(values)) / (noise * math.sqrt(2)) <= thr


def _confirmed(
    level: Level,
    current: float,
    remeasured: Sequence[float],
    worse: int,
    opts: GateOptions,
    up: bool,
) -> tuple[bool, float, float]:
    """Whether the re-measurement on its own is worse beyond noise (and agrees with the first)."""
    if not remeasured:
        return False, math.nan, math.nan
    value = conservative_median(remeasured, up)
    thr = confirm_z(opts, level.points)
    beyond = _side(level, value, thr, opts) == worse
    return beyond and consistent(level, [current, *remeasured], opts), level.z(value), thr


def _decide(
    level: Level,
    current: float,
    remeasured: Sequence[float],
    mode: GateMode,
    up: bool,
    opts: GateOptions,
    own: OwnDips,
) -> tuple[bool, bool, int, tuple[float, float]]:
    """(regressed, suspect, side of ``current``, (re-measurement z, its threshold))."""
    side = _side(level, current, opts.z_threshold, opts)
    worse_side = _worse_side(up)
    worse = side == worse_side
    confirmed, rz, rthr = _confirmed(level, current, remeasured, worse_side, opts, up)
    at_once = far_beyond(level, current, opts) or beyond_own_dips(level, current, own, opts)
    regressed = worse and (confirmed if mode == "confirm" else mode == "single" and at_once)
    # A re-measurement beyond noise that disagrees with the first stays a suspect (a warning).
    cleared = (
        mode == "confirm" and bool(remeasured) and not confirmed and not worse_side * rz >= rthr
    )
    return regressed, worse and not regressed and not cleared, side, (rz, rthr)


def screens_worse(
    level: Level,
    current: float,
    *,
    higher_is_better: bool = True,
    options: GateOptions | None = None,
) -> bool:
    """Whether ``current`` is worse than ``level`` beyond the screen (a suspect).

    Before any re-measurement; the screen's bar is ``z_threshold``, whatever the family size.
    """
    opts = options or GateOptions()
    worse = _worse_side(higher_is_better)
    return _judgeable(level, current) and _side(level, current, opts.z_threshold, opts) == worse


def far_beyond(level: Level, value: float, opts: GateOptions) -> bool:
    """Whether ``value`` is far beyond noise: ``fail_at_once_effect`` at ``fail_at_once_z``."""
    rel = (value - level.level) / level.level
    return abs(rel) >= opts.fail_at_once_effect and abs(level.z(value)) >= opts.fail_at_once_z


def _improved(level: Level, current: float, side: int, up: bool, opts: GateOptions) -> bool:
    """Better on one measurement (``side``, the screen's), far beyond noise (the at-once bar).

    Nothing re-measures a kernel that looks better, so one value is all there is: the
    per-value test (``compare_to_baseline``) called 300 heavy-tailed values of 20 stable
    2,000-kernel PRs improved (``bench_pr_cli.py``), this bar 1. A smaller real improvement
    is confirmed by the nightly runs after the merge.
    """
    return side == -_worse_side(up) and far_beyond(level, current, opts)


def judge_measurement(
    level: Level,
    current: float,
    remeasured: Sequence[float] = (),
    *,
    higher_is_better: bool = True,
    mode: GateMode = "single",
    options: GateOptions | None = None,
    own_dips: OwnDips | None = None,
) -> Judgement:
    """Judge a PR's ``current`` value and its ``remeasured`` values against ``level``.

    ``level``: the base branch's (``current_levels``); ``mode``: see the module; in
    ``options``, ``family_size`` is the number of suspects re-measured (``screens_worse``;
    kernels re-measured that were not suspects are not tested, so they do not count).
    ``own_dips``: what the kernel's history says a dip can explain (``rules.stats.dips``;
    None: unknown): without a re-measure step, a drop far beyond it fails at once.
    """
    opts = options or GateOptions()
    enough = _judgeable(level, current)
    regressed, suspect, side, (rz, rthr) = (
        _decide(level, current, remeasured, mode, higher_is_better, opts, own_dips or OwnDips())
        if enough
        else (False, False, 0, (math.nan, math.nan))
    )
    return Judgement(
        regressed=regressed,
        suspect=suspect,
        improved=enough and _improved(level, current, side, higher_is_better, opts),
        level=level.level,
        relative_change=(current - level.level) / level.level if enough else math.nan,
        current=current,
        noise=level.noise,
        z=level.z(current) if enough else math.nan,
        z_threshold=opts.z_threshold,
        n=level.n,
        segment_start=level.start,
        run=abs(side),
        confirm_runs=1 + bool(remeasured),
        enough=enough,
        remeasured=tuple(float(v) for v in remeasured),
        remeasured_z=rz,
        confirm_threshold=rthr,
        method=f"PR gate ({mode}): segment level, robust z",
    )


def judge_measurements(
    levels: Sequence[Level],
    currents: Sequence[float],
    remeasured: Sequence[Sequence[float]],
    *,
    higher_is_better: bool,
    mode: GateMode,
    options: GateOptions,
    own_dips: Sequence[OwnDips | None],
) -> list[Judgement]:
    """``judge_measurement`` of each kernel, the quiet ones decided for all at once.

    A kernel without re-measurements whose value is within noise or within ``min_effect`` of
    its level (``_quiet``, with a margin over float rounding) is neither suspect, regressed
    nor improved in any mode: its judgement needs only its figures. The others are judged
    one by one.
    """
    quiet = _quiet(levels, currents, options)
    method = f"PR gate ({mode}): segment level, robust z"
    return [
        _unchanged(level, current, method, options.z_threshold)
        if calm and not again
        else judge_measurement(
            level,
            current,
            again,
            higher_is_better=higher_is_better,
            mode=mode,
            options=options,
            own_dips=own,
        )
        for level, current, again, own, calm in zip(
            levels, currents, remeasured, own_dips, quiet, strict=True
        )
    ]


def _quiet(levels: Sequence[Level], currents: Sequence[float], opts: GateOptions) -> list[bool]:
    """Whether each value is judgeable and off its level by less than ``_side`` notices."""
    level = np.array([lv.level for lv in levels], dtype=float)
    noise = np.array([lv.noise for lv in levels], dtype=float)
    se = np.array([lv.se for lv in levels], dtype=float)
    n = np.array([lv.n for lv in levels], dtype=float)
    now = np.asarray(currents, dtype=float)
    with np.errstate(all="ignore"):
        scale = noise * np.sqrt(1 + se**2)
        z = np.abs((now - level) / scale)
        rel = np.abs((now - level) / np.abs(level))
        judgeable = (n >= 1) & (level != 0) & np.isfinite(level + now) & (scale > 0)
        within = (z < opts.z_threshold * (1 - QUIET_MARGIN)) | (
            rel < opts.min_effect * (1 - QUIET_MARGIN)
        )
    return [bool(q) for q in judgeable & within]


def _unchanged(level: Level, current: float, method: str, z_threshold: float) -> Judgement:
    """``judge_measurement``'s judgement of a quiet value without re-measurements.

    Most kernels of a run: made by ``frozen_from``, without the per-field calls.
    """
    return frozen_from(
        Judgement,
        regressed=False,
        suspect=False,
        improved=False,
        level=level.level,
        relative_change=(current - level.level) / level.level,
        current=current,
        noise=level.noise,
        z=level.z(current),
        z_threshold=z_threshold,
        n=level.n,
        segment_start=level.start,
        run=0,
        confirm_runs=1,
        enough=True,
        remeasured=(),
        remeasured_z=math.nan,
        confirm_threshold=math.nan,
        method=method,
        modes=None,
    )


def at_its_modes(judged: Judgement, history: npt.ArrayLike, opts: GateOptions) -> Judgement:
    """``judged`` cleared when its values lie at a mode of a two-level base history.

    The nightly gate reads a night at a two-level kernel's other mode as no drop
    (``rules.stats.modes``). A PR measured while the runner was in its other state read as a
    drop against the base branch's level, and its re-measure, on the same runner in the same
    state, confirmed it: an unchanged PR failed. Here as at night, a value off both modes
    (beyond them, or between them on a runner that alternates) stays what it was, and so
    does one at a level the history visited once only (``visited_once``: a PR that brings
    back a regression main fixed reads exactly so) or never stayed at (``_stayed_at``).
    """
    if not (judged.suspect or judged.regressed):
        return judged
    nights = clean(history)
    modes = two_modes(nights, opts.noise_floor)
    if modes is None or visited_once(modes) or not _stayed_at(nights, modes, judged.current):
        return judged
    side = int(np.sign(judged.z))
    if any(modes.off(v, side) for v in (judged.current, *judged.remeasured)):
        return judged
    return replace(judged, regressed=False, suspect=False, modes=modes)


def _stayed_at(nights: FloatArray, modes: Modes, value: float) -> bool:
    """Whether ``nights`` held ``MIN_MODE_STAY`` in a row at the mode nearest ``value``.

    A runner's other state is lived in for nights; one-night outliers on one side of a steady
    kernel also read as a mode (two nights 8% slow in 30), and a PR's drop to them is a drop.
    """
    at = np.abs(nights - modes.nearest(value)) <= AT_MODE_Z * modes.spread
    here, _ = stays(at)
    return any(end - first >= MIN_MODE_STAY for first, end in here)


def median_of(samples: Sequence[float] | npt.ArrayLike) -> float:
    """The median of one run's samples (NaN when there are none)."""
    if isinstance(samples, list) and len(samples) == 1:  # one value: most kernels, most runs
        value = float(samples[0])
        return math.nan if math.isnan(value) else value / 2 + value / 2  # as fast_median
    arr = clean(samples)
    return fast_median(arr) if arr.size else math.nan
