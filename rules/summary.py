"""Baseline summaries: what a kernel (or a group) is compared with, in numbers people read."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from rules.stats import (
    CompareOptions,
    Comparison,
    FloatArray,
    compare_to_baseline,
    robust_center_spread,
)
from rules.verdict import BaselineSummary

#: Baseline values kept for sparklines.
SPARKLINE_POINTS = 30


def _finite(value: float) -> float | None:
    return None if value is None or math.isnan(value) or math.isinf(value) else float(value)


def _commit_range(commits: Sequence[str | None]) -> tuple[str, ...]:
    known = [c for c in commits if c]
    return (known[0], known[-1]) if known else ()


def _known(values: npt.ArrayLike) -> FloatArray:
    array = np.asarray(values, dtype=float)
    return np.asarray(array[~np.isnan(array)], dtype=float)


def segment_in_sparkline(values: FloatArray, rows: slice | None) -> tuple[int, int] | None:
    """Where ``values[rows]`` lie among the sparkline's points (None: all of them)."""
    if rows is None:
        return None
    before, inside = _known(values[: rows.start]).size, _known(values[rows]).size
    shown = _known(values).size
    if inside == shown:
        return None
    offset = max(0, shown - SPARKLINE_POINTS)
    return (max(0, before - offset), max(0, before + inside - offset))


def summarise(
    values: npt.ArrayLike,
    current: float | None,
    *,
    metric: str = "percent_of_roof",
    commits: Sequence[str | None] = (),
    regimes: Sequence[str | None] = (),
    higher_is_better: bool = True,
    options: CompareOptions | None = None,
    rows: slice | None = None,
) -> tuple[BaselineSummary, Comparison | None]:
    """Summary of baseline ``values`` (oldest first) and the comparison of ``current`` with it.

    Args:
        values: The metric per baseline run (NaN = unknown, left out).
        current: The current value (None when the kernel has none).
        metric: What ``values`` measure (``percent_of_roof``, ``time_s``, ``mfu``).
        commits: Commit per baseline run, for the commit range.
        regimes: Regime per baseline run; the latest known one is reported.
        higher_is_better: Direction of ``metric``.
        options: Thresholds of the comparison.
        rows: The runs the baseline is (``rules.segments``); the sparkline shows every run.
    """
    full = np.asarray(values, dtype=float)
    part = slice(None) if rows is None else rows
    array = _known(full[part])
    center, spread = robust_center_spread(array)
    known = [r for r in regimes[part] if r]
    comparison = None
    if current is not None and array.size:
        comparison = compare_to_baseline(
            array, current, higher_is_better=higher_is_better, options=options
        )
    summary = BaselineSummary(
        n=int(array.size),
        center=_finite(center),
        spread=_finite(spread),
        regime=known[-1] if known else None,
        relative_change=_finite(comparison.relative_change) if comparison else None,
        history=tuple(float(v) for v in _known(full)[-SPARKLINE_POINTS:]),
        used=segment_in_sparkline(full, rows),
        commits=_commit_range(commits[part]),
        metric=metric,
    )
    return summary, comparison
