"""Baseline summaries: what a kernel (or a group) is compared with, in numbers people read."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from rules.stats import CompareOptions, Comparison, compare_to_baseline, robust_center_spread
from rules.verdict import BaselineSummary

#: Baseline values kept for sparklines.
SPARKLINE_POINTS = 30


def _finite(value: float) -> float | None:
    return None if value is None or math.isnan(value) or math.isinf(value) else float(value)


def _commit_range(rows: pd.DataFrame) -> tuple[str, ...]:
    if rows.empty or "commit" not in rows:
        return ()
    commits = [str(c) for c in rows["commit"].dropna()]
    return (commits[0], commits[-1]) if commits else ()


def summarise(
    rows: pd.DataFrame,
    metric: str,
    current: float | None,
    *,
    higher_is_better: bool = True,
    options: CompareOptions | None = None,
) -> tuple[BaselineSummary, Comparison | None]:
    """Summary of ``rows[metric]`` (oldest first) and the comparison of ``current`` with it.

    Args:
        rows: Baseline rows, oldest first, with ``metric`` and ``commit`` columns.
        metric: Column to summarise (``percent_of_roof`` or ``time_s``).
        current: The current value (None when the kernel has none).
        higher_is_better: Direction of ``metric``.
        options: Thresholds of the comparison.
    """
    values = (
        pd.to_numeric(rows[metric], errors="coerce").to_numpy(dtype=float)
        if len(rows)
        else np.array([])
    )
    values = values[~np.isnan(values)]
    center, spread = robust_center_spread(values)
    regime = None
    if len(rows) and "regime" in rows:
        regimes = rows["regime"].dropna()
        regime = str(regimes.iloc[-1]) if len(regimes) else None
    comparison = None
    if current is not None and values.size:
        comparison = compare_to_baseline(values, current, higher_is_better=higher_is_better,
                                         options=options)  # fmt: skip
    summary = BaselineSummary(
        n=int(values.size),
        center=_finite(center),
        spread=_finite(spread),
        regime=regime,
        relative_change=_finite(comparison.relative_change) if comparison else None,
        history=tuple(float(v) for v in values[-SPARKLINE_POINTS:]),
        commits=_commit_range(rows),
        metric=metric,
    )
    return summary, comparison
