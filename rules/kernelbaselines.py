"""Every placed kernel's baseline summary at once: the verdict's rows without a loop of numpy.

A kernel's row says what it was judged against (``BaselineSummary``): the median and scaled
MAD of its percent of roof, its change, its sparkline, the median time and usual binding.
Summarised one kernel at a time (``rules.summary.summarise``, ``rules.timing``) that is about
twenty small numpy calls a kernel, most of a 2,000-kernel check. Here the kernels whose
history is plain (the common case on a stable branch) are summarised a block of equally long
histories at a time: one sort per block for the medians, one for the MADs, the same float
operations in the same order, so every figure is the same float. A kernel whose summary needs
more (a gate segment shorter than its window, a missing or non-finite value, runs bound by
another resource, no history) is left out, and the engine summarises it as before.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

import numpy as np
import numpy.typing as npt

from rules.context import RuleContext
from rules.gated import GateDecisions
from rules.history import KernelHistory
from rules.stats import MAD_SCALE
from rules.summary import SPARKLINE_POINTS
from rules.timing import baseline_binding, like_for_like_percent
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


def _plain(ctx: RuleContext, gate: GateDecisions, key: str, history: KernelHistory) -> bool:
    """Whether ``key``'s summary is the whole window's (the gate's segment covers it)."""
    gated = gate.get(METRIC, key)
    if gated is None or ctx.placements[key].percent_of_roof is None or not history.n:
        return False
    return gated.rows(history.percent_of_roof) is None


def _blocks(ctx: RuleContext, gate: GateDecisions) -> list[_Block]:
    by_length: dict[int, _Block] = {}
    for key in ctx.kernels:
        history = ctx.kernel_history(key)
        if ctx.device_scaling.get(key) is None and _plain(ctx, gate, key, history):
            block = by_length.setdefault(history.n, _Block([], []))
            block.keys.append(key)
            block.histories.append(history)
    return list(by_length.values())


def _medians(ordered: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``fast_median`` of each row of the row-sorted ``ordered``: halves first, as it does."""
    n = ordered.shape[1]
    middle: npt.NDArray[np.float64] = ordered[:, (n - 1) // 2] / 2 + ordered[:, n // 2] / 2
    return middle


def _uniform(codes: npt.NDArray[np.intp]) -> npt.NDArray[np.bool_]:
    """Rows whose labels are all the same known one."""
    same: npt.NDArray[np.bool_] = np.all(codes == codes[:, -1:], axis=1) & (codes[:, -1] >= 0)
    return same


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _summaries(ctx: RuleContext, block: _Block) -> dict[str, BaselineSummary]:
    """The summaries of ``block``'s plain kernels (the others are left out)."""
    histories = block.histories
    percent = np.stack([h.percent_of_roof for h in histories])
    times = np.stack([h.time_s for h in histories])
    rows = np.stack([h.rows for h in histories])
    labels = histories[0].labels
    binding_codes, _ = labels.codes("binding")
    regime_codes, regimes = labels.codes("regime")
    plain = (
        np.all(np.isfinite(percent), axis=1)
        & np.all(np.isfinite(times) & (times > 0), axis=1)
        & _uniform(binding_codes[rows])
        & (regime_codes[rows[:, -1]] >= 0)
    )
    centers = _medians(np.sort(percent, axis=1))
    spreads = MAD_SCALE * _medians(np.sort(np.abs(percent - centers[:, None]), axis=1))
    median_times = _medians(np.sort(times, axis=1))
    found = {}
    for i in (int(i) for i in np.flatnonzero(plain)):
        key, history = block.keys[i], histories[i]
        commits = _commit_range(history)
        if commits is None:
            continue
        found[key] = _summary(
            ctx,
            key,
            history,
            center=float(centers[i]),
            spread=float(spreads[i]),
            regime=regimes[regime_codes[rows[i, -1]]],
            commits=commits,
            time_s=float(median_times[i]),
        )
    return found


def _commit_range(history: KernelHistory) -> tuple[str, str] | None:
    """The first and last commits when both are known (None: the engine finds the range)."""
    codes, commits = history.labels.codes("commit")
    first, last = codes[history.rows[0]], codes[history.rows[-1]]
    if first < 0 or last < 0 or not commits[first] or not commits[last]:
        return None
    return commits[first], commits[last]


def _summary(
    ctx: RuleContext,
    key: str,
    history: KernelHistory,
    *,
    center: float,
    spread: float,
    regime: str,
    commits: tuple[str, str],
    time_s: float,
) -> BaselineSummary:
    """What ``summarise`` then ``with_time`` make of a plain history, field for field."""
    current = like_for_like_percent(ctx.placements[key], history)
    change = None
    if current is not None:
        value = current / 2 + current / 2  # the median of one value, as the comparison takes it
        change = _finite((value - center) / center if center else math.nan)
    return BaselineSummary(
        n=history.n,
        center=_finite(center),
        spread=_finite(spread),
        regime=regime,  # validated into a Regime, as summarise's is
        relative_change=change,
        history=tuple(cast(list[float], history.percent_of_roof[-SPARKLINE_POINTS:].tolist())),
        used=None,
        commits=commits,
        metric=METRIC,
        time_s=time_s,
        binding=baseline_binding(history),
    )


def kernel_baselines(ctx: RuleContext, gate: GateDecisions) -> Mapping[str, BaselineSummary]:
    """The baseline summaries of the run's plain kernels, by key (``_Block``, ``_plain``).

    Each is the summary ``rules.engine`` would build kernel by kernel, to the bit; a kernel
    left out is summarised there.
    """
    found: dict[str, BaselineSummary] = {}
    for block in _blocks(ctx, gate):
        found.update(_summaries(ctx, block))
    return found
