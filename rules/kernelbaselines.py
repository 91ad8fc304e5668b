"""Every placed kernel's baseline summary at once: the verdict's rows without a loop of numpy.

A kernel's row says what it was judged against (``BaselineSummary``): the median and scaled
MAD of its percent of roof, its change, its sparkline, the median time and usual binding.
Summarised one kernel at a time (``rules.summary.summarise``, ``rules.timing``) that is about
twenty small numpy calls a kernel, most of a 2,000-kernel check. Here the kernels whose
history is plain (the common case on a stable branch) are summarised a block of equally long
histories at a time: one sort per block for the medians, one for the MADs, the same float
operations in the same order, so every figure is the same float (kernels the gate judged on
the same segment of their windows make a block of their own). A kernel
whose summary needs more (a missing or non-finite value, runs bound by another resource, no
history) is left out, and the engine summarises it as before.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from rules.context import RuleContext
from rules.gated import GateDecisions
from rules.history import KernelHistory
from rules.stats import MAD_SCALE
from rules.summary import SPARKLINE_POINTS, segment_in_sparkline
from rules.timing import MIN_BINDING_RUNS, judged_binding
from rules.trusted import trusted
from rules.verdict import BaselineSummary

METRIC = "percent_of_roof"


@dataclass(frozen=True)
class _Block:
    """Placed kernels with histories of one length, judged on the same rows of them.

    Attributes:
        rows: The rows the gate's segment covers (``slice(0, n)``: all of them, no segment).
    """

    rows: slice
    keys: list[str] = field(default_factory=list)
    histories: list[KernelHistory] = field(default_factory=list)


def _blocks(ctx: RuleContext, gate: GateDecisions) -> list[_Block]:
    """The kernels summarised here, by history length and the rows their segment covers.

    Those the gate judged with a percent of roof and a history of their own card; the rows
    are where the gate's segment lies in the window (``GateDecision.rows``; None: all).
    """
    decisions, scaled, placements = gate.of(METRIC), ctx.device_scaling, ctx.placements
    blocks: dict[tuple[int, int, int], _Block] = {}
    for key in ctx.kernels:
        gated, history = decisions.get(key), ctx.kernel_history(key)
        if gated is None or placements[key].percent_of_roof is None or not history.n:
            continue
        if scaled.get(key) is not None:
            continue
        judged = gated.rows(history.percent_of_roof) or slice(0, history.n)
        block = blocks.setdefault((history.n, judged.start, judged.stop), _Block(judged))
        block.keys.append(key)
        block.histories.append(history)
    return list(blocks.values())


def _medians(ordered: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``fast_median`` of each row of the row-sorted ``ordered``: halves first, as it does."""
    n = ordered.shape[1]
    middle: npt.NDArray[np.float64] = ordered[:, (n - 1) // 2] / 2 + ordered[:, n // 2] / 2
    return middle


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _summaries(ctx: RuleContext, block: _Block) -> dict[str, BaselineSummary]:
    """The summaries of ``block``'s plain kernels (the others are left out)."""
    histories, judged = block.histories, block.rows
    full = np.stack([h.percent_of_roof for h in histories])
    percent, times = full[:, judged], np.stack([h.time_s for h in histories])[:, judged]
    rows = np.stack([h.rows for h in histories])
    labels = histories[0].labels
    regimes = _texts(labels.column("regime")[rows[:, judged.stop - 1]])
    commits = labels.column("commit")
    firsts, lasts = (
        _texts(commits[rows[:, judged.start]]),
        _texts(commits[rows[:, judged.stop - 1]]),
    )
    finite = cast(
        list[bool],
        (
            np.all(np.isfinite(full), axis=1) & np.all(np.isfinite(times) & (times > 0), axis=1)
        ).tolist(),
    )
    with np.errstate(all="ignore"):  # rows with a stored outlier are left out (not plain)
        centers = _medians(np.sort(percent, axis=1))
        spreads = MAD_SCALE * _medians(np.sort(np.abs(percent - centers[:, None]), axis=1))
        median_times = _medians(np.sort(times, axis=1))
    n = judged.stop - judged.start
    # Where the segment lies in the sparkline: the same for every finite window of the block.
    used = segment_in_sparkline(np.zeros(full.shape[1]), judged)
    figures = zip(_floats(centers), _floats(spreads), _floats(median_times), strict=True)
    found = {}
    for i, (center, spread, time_s) in enumerate(figures):
        history, regime, first, last = histories[i], regimes[i], firsts[i], lasts[i]
        binding = history.one_label("binding")
        if not (finite[i] and regime and first and last and binding):
            continue
        if not _current_on(ctx, block.keys[i], history, binding):
            continue
        summarised = _Figures(n, center, spread, regime, (first, last), time_s, binding, used)
        found[block.keys[i]] = _summary(ctx, block.keys[i], history, summarised)
    return found


def _current_on(ctx: RuleContext, key: str, history: KernelHistory, binding: str) -> bool:
    """Whether the row's current figure is of ``binding``'s roof, every run's of the history.

    Else its sparkline reads them at the work of the row's figure (``rules.timing``): the
    engine's.
    """
    placement = ctx.placements[key]
    return placement.binding == binding or judged_binding(placement, history) == binding


def _floats(values: npt.NDArray[np.floating[Any]]) -> list[float]:
    return cast(list[float], values.tolist())


def _texts(labels: npt.NDArray[np.object_]) -> list[str | None]:
    return cast(list[str | None], labels.tolist())


@dataclass(frozen=True)
class _Figures:
    """What a block gives a kernel's summary: the runs summarised (``n``), their figures.

    ``binding``: the one binding of every run of the window; ``used`` as ``summarise``'s.
    """

    n: int
    center: float
    spread: float
    regime: str
    commits: tuple[str, str]
    time_s: float
    binding: str
    used: tuple[int, int] | None = None


def _summary(
    ctx: RuleContext, key: str, history: KernelHistory, figures: _Figures
) -> BaselineSummary:
    """What ``summarise`` then ``with_time`` make of a plain history, field for field.

    ``figures`` summarise the runs judged: all of ``history``, or the gate's segment of it,
    which ``figures.used`` places in the sparkline of all of ``history``. Every run of it has
    one binding, so the usual binding of those runs is that one once there are enough.
    """
    center = figures.center
    current = ctx.like_for_like[key]
    change = None
    if current is not None:
        value = current / 2 + current / 2  # the median of one value, as the comparison takes it
        change = _finite((value - center) / center if center else math.nan)
    fields = {
        "n": figures.n,
        "center": _finite(center),
        "spread": _finite(figures.spread),
        "regime": figures.regime,  # validated into a Regime, as summarise's is
        "relative_change": change,
        "history": tuple(cast(list[float], history.percent_of_roof[-SPARKLINE_POINTS:].tolist())),
        "used": figures.used,
        "commits": figures.commits,
        "metric": METRIC,
        "time_s": figures.time_s,
        "binding": figures.binding if figures.n >= MIN_BINDING_RUNS else None,
    }
    return trusted(BaselineSummary, fields)  # figures of known types (rules.trusted)


#: The summary of a kernel with no baseline runs: its row shows no baseline (``n`` is 0) and
#: no time ratio (no median time), as ``summarise`` and ``with_time`` of no runs give.
NO_BASELINE = BaselineSummary(n=0, metric=METRIC)


def _new_kernels(ctx: RuleContext) -> dict[str, BaselineSummary]:
    """The placed kernels with no baseline run on this card nor another: ``NO_BASELINE``.

    The first run of a repository, a device or a kernel: every row of a new repository's
    upload, which the engine would otherwise summarise one kernel at a time, from nothing.
    Whether the gate called one improved is read from its decision, as for the others.
    """
    placements = ctx.placements
    return {
        key: NO_BASELINE
        for key in ctx.kernels
        if placements[key].percent_of_roof is not None
        and not ctx.kernel_history(key).n
        and ctx.device_scaling.get(key) is None
    }


def kernel_baselines(ctx: RuleContext, gate: GateDecisions) -> Mapping[str, BaselineSummary]:
    """The baseline summaries of the plain and the new kernels (``_Block``, ``_new_kernels``).

    Each is the summary ``rules.engine`` would build kernel by kernel, to the bit; a kernel
    left out is summarised there.
    """
    found = _new_kernels(ctx)
    for block in _blocks(ctx, gate):
        found.update(_summaries(ctx, block))
    return found
