"""Bursts: a run of nights far off the level whose nights do not agree is no level yet.

A noisy neighbour or a throttled card slows a kernel for two to four nights, then it is
back. Two or three such nights in a row pass for a change of level, but each of them is slowed
by its own amount (5% one night, 25% the next), while a real change moves every night by the
same amount and leaves them within noise of each other. So a run confirms a change only when
its nights agree: their range is at most ``RUN_AGREE_Z`` noises of a difference of two nights,
a pair's ``PAIR_AGREE_Z`` (``agrees``). The nights after a burst return; a real change, once
its nights agree, confirms.

Some bursts agree all the same (two nights 26% and 28% slow). A kernel that has such bursts
shows them in its history: runs of two or more nights, each beyond ``STRAY_Z`` night-to-night
noises off the median of the ``BURST_WINDOW`` nights centred on it (a burst of up to four
nights does not move that median; a change of level does, so it is no burst), that then came
back (``bursts``). Where the history holds ``MIN_BURSTS`` of them on the run's side, a run
confirms only once it outlasts the longest, or lies deeper or shallower than the kernel's
burst nights do (``bursts.Bursts.outlasts``): the evidence of the kernel's own bursts, not one
setting, chooses how many nights confirm. A kernel without bursts confirms as before, and so
does a run of ``pool_runs`` nights (the most a run holds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from rules.stats.constants import (
    BURST_DEPTH_Q,
    BURST_WINDOW,
    LEVEL_RATIO_SLACK,
    MAD_SCALE,
    MIN_BURSTS,
    PAIR_AGREE_Z,
    RUN_AGREE_Z,
    STRAY_Z,
)
from rules.stats.robust import FloatArray, fast_median


def agrees(run: FloatArray, noise: float, level: float = math.nan) -> bool:
    """Whether the nights of ``run`` are within ``RUN_AGREE_Z`` noises of a difference apart.

    Two nights are held to ``PAIR_AGREE_Z``: a pair that does not meet it waits for a third.
    ``noise`` is the noise of one night at ``level``; a run at another level is judged in
    ``noise_at`` its own (a GEMM 14x slower varies by 14x the milliseconds).
    """
    if run.size < 2 or not noise > 0:
        return True
    bar = PAIR_AGREE_Z if run.size == 2 else RUN_AGREE_Z
    return float(np.ptp(run)) <= bar * math.sqrt(2) * noise_at(noise, level, run)


def noise_at(noise: float, level: float, values: FloatArray) -> float:
    """``noise`` of one value at ``level``, scaled to the level of ``values`` (their median).

    Timing noise is relative: the same runner varies a kernel by the same share of its time.
    Held to the old level's noise in its units, a change's nights agreed or not by the
    direction its metric moved: a GEMM 14x slower read 1% apart in time (disagree, nights
    later) and 1% apart in percent of roof (agree, the next night), one change two ways.
    The ratio less ``LEVEL_RATIO_SLACK`` scales it, never below 1 (the constant says why).
    Without a usable ``level`` (NaN, 0) the noise is kept as it is.
    """
    if not math.isfinite(level) or level == 0 or values.size == 0:
        return noise
    return noise * max(1.0, abs(fast_median(values) / level) - LEVEL_RATIO_SLACK)


def _strays(history: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Per night of ``history`` but its ends: its side and its relative depth.

    Side: +1 / -1 when it strays above / below, else 0; depth: its distance from the median of
    the nights centred on it, relative to that median.
    """
    half = BURST_WINDOW // 2
    centred = np.median(sliding_window_view(history, BURST_WINDOW), axis=1)
    noise = MAD_SCALE * fast_median(np.abs(np.diff(history))) / math.sqrt(2)
    resid = history[half : history.size - half] - centred
    sides = np.where(np.abs(resid) > STRAY_Z * noise, np.sign(resid), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        depth = np.abs(resid / centred)
    return np.asarray(sides), np.asarray(depth)


@dataclass(frozen=True)
class Bursts:
    """A kernel's bursts on one side (none: ``nights`` 0).

    Attributes:
        nights: The longest burst.
        shallowest: The burst night nearest its centred median (relative to it).
        deep: The ``BURST_DEPTH_Q`` quantile of the burst nights' relative depths.
    """

    nights: int = 0
    shallowest: float = 0.0
    deep: float = 0.0

    def outlasts(self, run: FloatArray, level: float) -> bool:
        """Whether ``run`` (the newest nights) is no burst this kernel has shown.

        It is longer than the longest, or each of its nights is further off ``level`` than
        the burst nights mostly are (``deep``), or each is nearer than the shallowest.
        """
        if run.size > self.nights:
            return True
        off = np.abs(run / level - 1)
        return bool(np.min(off) > self.deep or np.max(off) < self.shallowest)


def bursts(history: FloatArray, sign: int) -> Bursts:
    """The bursts of ``history`` (oldest first) on side ``sign`` (-1: below the level).

    None (``Bursts()``) when it holds fewer than ``MIN_BURSTS``. A burst: two or more nights
    in a row that stray on one side, followed by a night that does not (it came back).
    """
    if history.size < 2 * BURST_WINDOW:
        return Bursts()
    sides, depth = _strays(history)
    longest, nights = 0, []
    run, side = 0, 0.0
    for i, s in enumerate(sides):
        if s != 0 and s == side:
            run += 1
            continue
        if run >= 2 and side == sign:
            longest = max(longest, run)
            nights.append(depth[i - run : i])
        run, side = (1, s) if s != 0 else (0, 0.0)
    if len(nights) < MIN_BURSTS:
        return Bursts()
    pooled = np.concatenate(nights)
    return Bursts(longest, float(np.min(pooled)), float(np.quantile(pooled, BURST_DEPTH_Q)))
