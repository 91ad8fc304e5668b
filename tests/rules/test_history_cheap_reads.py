"""Per-kernel reads of the history made once for all kernels: same figures, less work."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from rules.history import HistoryIndex
from rules.stats.constants import MIN_DETECTED_POINTS
from rules.stats.levels import _last_starts, _padded


def _frame() -> pd.DataFrame:
    rows = [
        {"kernel_key": "old", "timestamp": t, "binding": "dram", "regime": "memory"}
        for t in range(4)
    ]
    return pd.DataFrame(rows).assign(
        percent_of_roof=50.0,
        time_s=1.0,
        total_flops=[1.0, 2.0, np.nan, 3.0],
        bytes_dram=[2.0, 0.0, 4.0, np.nan],
    )


def test_every_kernel_without_rows_shares_one_empty_history() -> None:
    index = HistoryIndex(_frame())
    first, second = index.get(("new-a",)), index.get(("new-b", "renamed-b"))
    assert first is second  # a first run's 2,000 kernels: one history, its figures once
    assert first.n == 0 and first.usual_binding == (None, 0)
    for column in ("percent_of_roof", "time_s", "total_flops", "bytes_dram"):
        assert getattr(first, column).dtype == np.float64 and getattr(first, column).size == 0


def test_dram_intensity_divides_only_where_bytes_are_known() -> None:
    history = HistoryIndex(_frame()).get(("old", "renamed"))  # merged: not the group's figures
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # zero and unknown bytes warn nothing
        got = history.dram_intensity()
    np.testing.assert_array_equal(got, [0.5, np.nan, np.nan, np.nan])


def _starts_row_by_row(is_change: np.ndarray, rows: list[np.ndarray], min_points: int) -> list[int]:
    """The last change with enough points after it, one row at a time (the definition)."""
    starts = []
    for i, row in enumerate(rows):
        changes = np.flatnonzero(is_change[i]) - (is_change.shape[1] - row.size)
        changes = changes[changes <= row.size - max(min_points, MIN_DETECTED_POINTS)]
        starts.append(int(changes[-1]) if changes.size else 0)
    return starts


def test_segment_starts_of_all_rows_at_once_are_the_row_by_row_ones() -> None:
    rng = np.random.default_rng(7)
    for _ in range(500):
        rows = [np.zeros(rng.integers(0, 12)) for _ in range(rng.integers(1, 6))]
        is_change = rng.random(_padded(rows).shape) < rng.random()
        min_points = int(rng.integers(0, 6))
        expected = _starts_row_by_row(is_change, rows, min_points)
        assert _last_starts(is_change, rows, min_points) == expected
