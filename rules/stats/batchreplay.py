"""Many kernels' replays at once: the gate's segment night by night, certified in numpy.

``rules.stats.runs`` replays each kernel's last ``REPLAY_NIGHTS`` nights: ``step`` judges each
night in the segment the nights before it left, and only a confirmed run (``sign != 0``)
moves the segment's start. Nearly every night confirms nothing, and what shows it is a few
order statistics: the night is within ``run_floor`` of its level or ``min_effect`` of it, a
night of the run before it is, or the run's evidence stays short of the bar even at the
least spread of its sums (``runs._confirms``, its first tests). Here those figures are
computed for every kernel judged on a night, one numpy matrix per group of kernels that
share the night and the segment's start (so the rows are dense and the order statistics
those of ``level_of``).

A night is *certified* when every comparison it rests on is clear of its threshold by more
than the rounding the two computations can differ by (``REPLAY_TOLERANCE`` of the values'
size): it confirms nothing. Every other night (a run that may confirm, a figure on its threshold,
an infinite or zero level) is judged by ``step`` itself. So the starts are those of the
per-kernel replay, exactly; ``tests/rules/test_stats_batchreplay.py`` holds it to that.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rules.stats.constants import (
    CLIP_Z,
    MAD_SCALE,
    MEDIAN_SE,
    MIN_FIRST,
    MIN_LEVEL,
    MIN_SD_POINTS,
    REPLAY_NIGHTS,
    REPLAY_TOLERANCE,
    TRIMMING,
)
from rules.stats.modescreen import past_modes_rows
from rules.stats.options import GateOptions
from rules.stats.robust import BoolArray, FloatArray, IntArray, row_medians
from rules.stats.runs import (
    DETECTOR_NOISE_FLOOR,
    Replay,
    _evidence_scale,
    lowest_spread,
    night_noise,
    step,
)


def _near(x: FloatArray, bar: float | FloatArray, err: FloatArray) -> BoolArray:
    """Where ``x`` is within its rounding ``err`` of ``bar`` (or not a number at all)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(~(np.abs(x - bar) > REPLAY_TOLERANCE * err), dtype=bool)


@dataclass(frozen=True)
class _Levels:
    """``level_of`` of each row of a dense segment matrix, with where it may be off."""

    level: FloatArray
    scale: FloatArray
    unsure: BoolArray


def _location(ordered: FloatArray) -> tuple[FloatArray, float]:
    """``robust._location`` of each row (rows sorted)."""
    n = ordered.shape[1]
    for start, fraction, factor in TRIMMING:
        if n >= start:
            cut = int(n * fraction)
            return np.asarray(ordered[:, cut : n - cut].mean(axis=1), dtype=float), factor
    return row_medians(ordered), MEDIAN_SE


def _spread(
    segment: FloatArray, level: FloatArray, base: FloatArray, size: FloatArray
) -> tuple[FloatArray, BoolArray]:
    """``levels._spread`` of each row, and where a residual sits on the clip."""
    if segment.shape[1] < MIN_SD_POINTS:
        return base, np.zeros(base.shape, dtype=bool)
    resid = segment - level[:, None]
    absolute = np.abs(resid)
    clip = np.asarray(CLIP_Z * (MAD_SCALE * row_medians(np.sort(absolute, axis=1))))[:, None]
    kept = absolute <= clip
    count = kept.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(np.where(kept, resid**2, 0.0).sum(axis=1) / (count - 1))
    spread = np.asarray(np.where(count < MIN_SD_POINTS, base, np.maximum(base, sd)), dtype=float)
    return spread, np.asarray(_near(absolute, clip, size[:, None]).any(axis=1), dtype=bool)


def _levels(segment: FloatArray, noise: FloatArray, floor: float, size: FloatArray) -> _Levels:
    """``level_of`` of each row of ``segment`` (NaN-free, at least one column)."""
    ordered = np.sort(segment, axis=1)
    level, factor = _location(ordered)
    base = np.where(np.isfinite(noise), noise, 0.0)
    spread, on_clip = _spread(segment, level, base, size)
    used = np.maximum(spread, floor * np.abs(level))
    se = factor / math.sqrt(segment.shape[1])
    scale = np.asarray(used * math.sqrt(1 + se**2), dtype=float)
    unsure = on_clip | ~np.isfinite(scale) | ~(scale > 0) | _near(level, 0.0, size)
    return _Levels(level, scale, unsure)


def night_noises(history: FloatArray) -> FloatArray:
    """``runs.night_noise`` of each row of ``history`` (NaN-free)."""
    if history.shape[1] < 2:
        return np.full(history.shape[0], math.nan)
    steps = np.sort(np.abs(np.diff(history, axis=1)), axis=1)
    sigma = MAD_SCALE * row_medians(steps) / math.sqrt(2)
    return np.maximum(sigma, DETECTOR_NOISE_FLOOR * np.abs(row_medians(np.sort(history, axis=1))))


@dataclass(frozen=True)
class _Night:
    """One group's newest night: its rows, their size (largest value) and side, what is open."""

    history: FloatArray
    size: FloatArray
    sign: FloatArray
    open: BoolArray


def _first(
    history: FloatArray, start: int, noise: FloatArray, opts: GateOptions
) -> tuple[_Night, _Levels, BoolArray]:
    """The newest night against the level before it: ``step``'s screen (``run_floor``).

    Returns the night, its level, and the rows where a run may start (the loop's ``k = 1``).
    """
    size = np.max(np.abs(history[:, start:]), axis=1)
    first = _levels(history[:, start:-1], noise, opts.noise_floor, size)
    newest = history[:, -1]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        z = (newest - first.level) / first.scale
        err = size / first.scale + np.abs(z)
    unsure = ~np.isfinite(size) | first.unsure | _near(np.abs(z), opts.run_floor, err)
    sign = np.sign(newest - first.level)
    night = _Night(history, size, sign, unsure)
    return night, first, ~unsure & (np.abs(z) >= opts.run_floor)


def _run_of(
    night: _Night, k: int, rows: IntArray, level: _Levels, opts: GateOptions
) -> tuple[BoolArray, BoolArray, BoolArray]:
    """The ``k``-night run of ``rows``: beyond ``run_floor``, may confirm, unsure.

    Whether it is beyond ``run_floor`` on every night (the loop goes on), whether it may pass
    ``_confirms``'s first bar (its evidence pooled at the least spread), and where a figure is
    too near its bar to tell.
    """
    nights = night.history[rows, night.history.shape[1] - k :]
    size, side = night.size[rows, None], night.sign[rows, None]
    at, scale = level.level[:, None], level.scale[:, None]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        z = np.asarray(side * (nights - at) / scale, dtype=float)
        rel = np.asarray(side * (nights - at) / np.abs(at), dtype=float)
        z_err = size / scale + np.abs(z)
        unsure = level.unsure | (
            _near(rel, opts.min_effect, size / np.abs(at) + np.abs(rel))
            | _near(z, opts.run_floor, z_err)
        ).any(axis=1)
        signed = np.where(rel >= opts.min_effect, z, 0.0)
        passes = np.asarray(np.all(signed >= opts.run_floor, axis=1), dtype=bool)
        if k < opts.confirm_runs:
            return passes, np.zeros_like(passes), unsure
        shrink = _evidence_scale(opts, night.history.shape[1] - k) * lowest_spread(k)
        capped = np.minimum(signed / shrink, opts.nightly_floor) - opts.pool_allowance
        pooled = np.asarray(capped.sum(axis=1), dtype=float)
        bar = opts.confirm_runs * (opts.nightly_floor - opts.pool_allowance)
        err = np.asarray(z_err.sum(axis=1) / shrink + abs(bar), dtype=float)
    may = passes & ((pooled >= bar) | _near(pooled, bar, err))
    return passes, may, unsure


def _open_nights(
    history: FloatArray, start: int, noise: FloatArray, opts: GateOptions
) -> tuple[BoolArray, IntArray]:
    """Rows whose newest night ``step`` may confirm, and the run each other row ends with.

    ``history``: the nights up to the newest (dense rows); ``noise``: each row's. A row that
    may confirm is judged by ``step`` itself; for the others the run is ``step``'s ``run``
    (nights beyond ``run_floor`` on one side, up to the newest; 0: the newest is normal).
    """
    width = history.shape[1]
    run = np.zeros(history.shape[0], dtype=int)
    need = MIN_LEVEL if start else MIN_FIRST
    if width - 1 - start < need:  # no usable level: ``step`` judges nothing
        return np.zeros(history.shape[0], dtype=bool), run
    night, level, alive = _first(history, start, noise, opts)
    opened = night.open | past_modes_rows(history, start, alive, opts)
    for k in range(1, opts.pool_runs + 1):
        if not alive.any() or width - k - start < need:
            break
        rows = np.flatnonzero(alive)
        if k > 1:
            segment = history[rows, start : width - k]
            level = _levels(segment, noise[rows], opts.noise_floor, night.size[rows])
        else:
            level = _Levels(level.level[rows], level.scale[rows], level.unsure[rows])
        passes, may, unsure = _run_of(night, k, rows, level, opts)
        opened[rows[may | unsure]] = True
        alive[rows] = passes & ~may & ~unsure
        run[rows[alive[rows]]] = k
    return opened, run


def _matrix(rows: Sequence[FloatArray]) -> FloatArray:
    """Rows of different lengths as one array, aligned at the oldest night (NaN after)."""
    out = np.full((len(rows), max((r.size for r in rows), default=0) + 1), np.nan)
    for i, row in enumerate(rows):
        out[i, : row.size] = row
    return out


def _groups(nights: IntArray, starts: IntArray) -> list[tuple[int, int, IntArray]]:
    """The positions that share a night and a start: (night, start, positions)."""
    if not nights.size:
        return []
    keys = np.stack([nights, starts], axis=1)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    order = np.argsort(inverse.ravel(), kind="stable")
    bounds = np.cumsum(np.bincount(inverse.ravel(), minlength=len(unique)))[:-1]
    parts = np.split(order, bounds)
    return [(int(t), int(s), p) for (t, s), p in zip(unique, parts, strict=True)]


class _Replayer:
    """The replay of many rows, night by night (``runs.segment_starts_by_night`` of each)."""

    def __init__(self, rows: Sequence[FloatArray], opts: GateOptions) -> None:
        self.rows, self.opts = rows, opts
        self.matrix = _matrix(rows)
        self.sizes = np.array([r.size for r in rows], dtype=int)

    def night(self, kernels: IntArray, nights: IntArray, starts: IntArray) -> None:
        """Judge night ``nights[i]`` of row ``kernels[i]`` in its segment; ``starts`` moves on."""
        need = np.where(starts > 0, MIN_LEVEL, MIN_FIRST)
        judged = np.flatnonzero(nights - starts >= need)
        for t, start, part in _groups(nights[judged], starts[judged]):
            at = judged[part]
            history = self.matrix[kernels[at], : t + 1]
            opened, _ = _open_nights(history, start, night_noises(history[:, :-1]), self.opts)
            for i in at[opened]:
                row = self.rows[int(kernels[i])]
                again = step(row[: t + 1], start, night_noise(row[:t]), self.opts)
                if again.moves_start:
                    starts[i] = t + 1 - again.run

    def states(self, starts: Sequence[int], sinces: Sequence[int]) -> list[list[int]]:
        """Per row, ``segment_starts_by_night(row, opts, start, since)[since:]``."""
        start = np.array(starts, dtype=int)
        since = np.array(sinces, dtype=int)
        count = np.maximum(self.sizes - since, 0)  # the nights each row replays
        entered = np.zeros((len(self.rows), int(np.max(count, initial=0)) + 1), dtype=int)
        for j in range(entered.shape[1] - 1):
            kernels = np.flatnonzero(since + j < self.sizes)
            entered[kernels, j] = start[kernels]
            moved = start[kernels]
            self.night(kernels, since[kernels] + j, moved)
            start[kernels] = moved
        entered[np.arange(len(self.rows)), count] = start
        return [row[: c + 1] for row, c in zip(entered.tolist(), count.tolist(), strict=True)]


def replayed_many(
    rows: Sequence[FloatArray], opts: GateOptions, starts: Sequence[int]
) -> list[Replay]:
    """``runs.replayed(row, opts, start)`` of each row, the nights of all judged together."""
    sinces = [max(s, r.size - REPLAY_NIGHTS) for r, s in zip(rows, starts, strict=True)]
    states = _Replayer(rows, opts).states(starts, sinces)
    return [Replay(s, tuple(st)) for s, st in zip(sinces, states, strict=True)]


def replay_many(
    rows: Sequence[FloatArray],
    opts: GateOptions,
    starts: Sequence[int],
    before: Sequence[Replay | None],
) -> list[int]:
    """``runs.replay(row, opts, start, before=b)`` of each row, the nights judged together."""
    begin, sinces = [], []
    for row, start, b in zip(rows, starts, before, strict=True):
        since = max(start, row.size - REPLAY_NIGHTS)
        shared = b is not None and b.entered(since, start)
        begin.append(b.start if shared and b is not None else start)
        sinces.append(row.size - 1 if shared else since)
    return [s[-1] for s in _Replayer(rows, opts).states(begin, sinces)]


def pending_runs(
    rows: Sequence[FloatArray], starts: Sequence[int], noise: FloatArray, opts: GateOptions
) -> list[int | None]:
    """``step(row, start, noise).run`` of each row where it certainly confirms nothing, else None.

    Then the level the next value is judged against is ``level_of`` of the row without its
    last ``run`` nights (``gate.level_after``). An empty row has no run (0).
    """
    run = np.zeros(len(rows), dtype=int)
    opened = np.zeros(len(rows), dtype=bool)
    matrix = _matrix(rows)
    sizes = np.array([r.size for r in rows], dtype=int)
    usable = np.flatnonzero(sizes > 0)
    start = np.array(starts, dtype=int)
    for t, begin, part in _groups(sizes[usable] - 1, start[usable]):
        at = usable[part]
        opened[at], run[at] = _open_nights(matrix[at, : t + 1], begin, noise[at], opts)
    return [None if o else int(r) for o, r in zip(opened.tolist(), run.tolist(), strict=True)]
