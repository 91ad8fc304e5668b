"""Every placed kernel's baseline summary at once: the verdict's rows without a loop of numpy.

A kernel's row says what it was judged against (``BaselineSummary``): the median and scaled
MAD of its percent of roof, its change, its sparkline, the median time and usual binding.
Summarised one kernel at a time (``rules.summary.summarise``, ``rules.timing``) that is about
twenty small numpy calls a kernel, most of a 2,000-kernel check. Here the kernels whose
history is plain (the common case on a stable branch) are summarised a block of equally long
histories at a time: one sort per block for the medians, one for the MADs, the same float
operations in the same order, so every figure is the same float (a kernel the gate judged on
a segment shorter than its window is summarised alone, with the same functions). A kernel
whose summary needs more (a missing or non-finite value, runs bound by another resource, no
history) is left out, and the engine summarises it as before.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from rules.context import RuleContext
from rules.gated import GateDecisions
from rules.history import KernelHistory
from rules.stats import MAD_SCALE, fast_median, robust_center_spread
from rules.summary import SPARKLINE_POINTS, segment_in_sparkline
from rules.timing import baseline_binding
from rules.verdict import BaselineSummary

METRIC = "percent_of_roof"


@dataclass(frozen=True)
class _Block:
    """Placed kernels with histories of one length ``n`` (rows of the same arrays)."""

    keys: list[str]
    histories: list[KernelHistory]

    @property
    def n(self) -> int:
        return self.histories[0].n


def _segment(ctx: RuleContext, gate: GateDecisions, key: str) -> slice | bool | None:
    """The rows of ``key``'s window the gate's segment covers (None: all; False: not here)."""
    gated = gate.get(METRIC, key)
    history = ctx.kernel_history(key)
    if gated is None or ctx.placements[key].percent_of_roof is None or not history.n:
        return False
    if ctx.device_scaling.get(key) is not None:
        return False
    return gated.rows(history.percent_of_roof)


def _blocks(ctx: RuleContext, gate: GateDecisions) -> tuple[list[_Block], dict[str, slice]]:
    """The plain kernels by history length, and the kernels judged on part of their window."""
    by_length: dict[int, _Block] = {}
    segments: dict[str, slice] = {}
    for key in ctx.kernels:
        rows = _segment(ctx, gate, key)
        if rows is None:
            history = ctx.kernel_history(key)
            block = by_length.setdefault(history.n, _Block([], []))
            block.keys.append(key)
            block.histories.append(history)
        elif isinstance(rows, slice):
            segments[key] = rows
    return list(by_length.values()), segments


def _medians(ordered: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``fast_median`` of each row of the row-sorted ``ordered``: halves first, as it does."""
    n = ordered.shape[1]
    middle: npt.NDArray[np.float64] = ordered[:, (n - 1) // 2] / 2 + ordered[:, n // 2] / 2
    return middle


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _summaries(ctx: RuleContext, block: _Block) -> dict[str, BaselineSummary]:
    """The summaries of ``block``'s plain kernels (the others are left out)."""
    histories = block.histories
    percent = np.stack([h.percent_of_roof for h in histories])
    times = np.stack([h.time_s for h in histories])
    rows = np.stack([h.rows for h in histories])
    labels = histories[0].labels
    regimes = _texts(labels.column("regime")[rows[:, -1]])
    commits = labels.column("commit")
    firsts, lasts = _texts(commits[rows[:, 0]]), _texts(commits[rows[:, -1]])
    finite = cast(
        list[bool],
        (
            np.all(np.isfinite(percent), axis=1) & np.all(np.isfinite(times) & (times > 0), axis=1)
        ).tolist(),
    )
    with np.errstate(all="ignore"):  # rows with a stored outlier are left out (not plain)
        centers = _medians(np.sort(percent, axis=1))
        spreads = MAD_SCALE * _medians(np.sort(np.abs(percent - centers[:, None]), axis=1))
        median_times = _medians(np.sort(times, axis=1))
    figures = zip(_floats(centers), _floats(spreads), _floats(median_times), strict=True)
    found = {}
    for i, (center, spread, time_s) in enumerate(figures):
        history, regime, first, last = histories[i], regimes[i], firsts[i], lasts[i]
        if not (finite[i] and regime and first and last and history.one_label("binding")):
            continue
        summarised = _Figures(center, spread, regime, (first, last), time_s)
        found[block.keys[i]] = _summary(ctx, block.keys[i], history, history, summarised)
    return found


def _floats(values: npt.NDArray[np.floating[Any]]) -> list[float]:
    return cast(list[float], values.tolist())


def _texts(labels: npt.NDArray[np.object_]) -> list[str | None]:
    return cast(list[str | None], labels.tolist())


def _commit_range(history: KernelHistory) -> tuple[str, str] | None:
    """The first and last commits when both are known (None: the engine finds the range)."""
    commits = history.labels.column("commit")
    first, last = commits[history.rows[0]], commits[history.rows[-1]]
    return (first, last) if first and last else None


def _segment_summary(
    ctx: RuleContext, key: str, history: KernelHistory, rows: slice
) -> BaselineSummary | None:
    """The summary of a kernel the gate judged on ``rows`` of its window (its segment).

    None where the history is not plain (``_summaries`` says what plain is).
    """
    part = history.part(rows)
    full, times = history.percent_of_roof, part.time_s
    if not (np.all(np.isfinite(full)) and np.all(np.isfinite(times) & (times > 0))):
        return None
    last_regime = history.labels.column("regime")[part.rows[-1]]
    commits = _commit_range(part)
    if not history.one_label("binding") or not last_regime or not commits:
        return None
    center, spread = robust_center_spread(part.percent_of_roof)
    return _summary(
        ctx,
        key,
        history,
        part,
        _Figures(
            center,
            spread,
            last_regime,
            commits,
            fast_median(times),
            segment_in_sparkline(full, rows),
        ),
    )


@dataclass(frozen=True)
class _Figures:
    """What a block (or a segment) gives a kernel's summary; ``used`` as ``summarise``'s."""

    center: float
    spread: float
    regime: str
    commits: tuple[str, str]
    time_s: float
    used: tuple[int, int] | None = None


def _summary(
    ctx: RuleContext, key: str, history: KernelHistory, part: KernelHistory, figures: _Figures
) -> BaselineSummary:
    """What ``summarise`` then ``with_time`` make of a plain history, field for field.

    ``part``: the runs summarised (``history`` itself, or the gate's segment of it, which
    ``figures.used`` places in the sparkline of all of ``history``).
    """
    center = figures.center
    current = ctx.like_for_like[key]
    change = None
    if current is not None:
        value = current / 2 + current / 2  # the median of one value, as the comparison takes it
        change = _finite((value - center) / center if center else math.nan)
    return BaselineSummary(
        n=part.n,
        center=_finite(center),
        spread=_finite(figures.spread),
        regime=figures.regime,  # validated into a Regime, as summarise's is
        relative_change=change,
        history=tuple(cast(list[float], history.percent_of_roof[-SPARKLINE_POINTS:].tolist())),
        used=figures.used,
        commits=figures.commits,
        metric=METRIC,
        time_s=figures.time_s,
        binding=baseline_binding(part),
    )


def kernel_baselines(ctx: RuleContext, gate: GateDecisions) -> Mapping[str, BaselineSummary]:
    """The baseline summaries of the run's plain kernels, by key (``_Block``, ``_plain``).

    Each is the summary ``rules.engine`` would build kernel by kernel, to the bit; a kernel
    left out is summarised there.
    """
    found: dict[str, BaselineSummary] = {}
    blocks, segments = _blocks(ctx, gate)
    for block in blocks:
        found.update(_summaries(ctx, block))
    for key, rows in segments.items():
        summary = _segment_summary(ctx, key, ctx.kernel_history(key), rows)
        if summary is not None:
            found[key] = summary
    return found
