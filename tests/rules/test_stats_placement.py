"""Candidate placement (``rules.stats.placement``) against a straightforward reference.

The placement picks each side's median by rank from one sort of the row and takes the
Theil-Sen median with one partition; the reference below sorts each side of every split and
calls ``np.median``, as the placement did before. The splits, the step and line costs and the
whole scan must be the same bits.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rules.stats import ChangePointOptions, change_points_many, changepoints, placement
from rules.stats.robust import FloatArray


def reference_medians(matrix: FloatArray) -> FloatArray:
    ordered = np.sort(matrix, axis=-1)
    count = np.sum(~np.isnan(matrix), axis=-1)
    lo = np.take_along_axis(ordered, np.clip((count - 1) // 2, 0, None)[..., None], axis=-1)
    hi = np.take_along_axis(ordered, np.clip(count // 2, 0, None)[..., None], axis=-1)
    return np.asarray((lo[..., 0] + hi[..., 0]) / 2, dtype=float)


def reference_best_splits(points: FloatArray, min_segment: int) -> tuple[FloatArray, FloatArray]:
    """Every split's two sides masked with NaN, sorted, and summed with ``np.nansum``."""
    size = points.shape[1]
    splits = np.arange(min_segment, size - min_segment + 1)
    on_left = np.arange(size)[None, :] < splits[:, None]
    left = np.where(on_left, points[:, None, :], np.nan)
    right = np.where(on_left, np.nan, points[:, None, :])
    cost = np.nansum(np.abs(left - reference_medians(left)[..., None]), axis=-1) + np.nansum(
        np.abs(right - reference_medians(right)[..., None]), axis=-1
    )
    best = np.argmin(cost, axis=1)
    return splits[best], cost[np.arange(points.shape[0]), best]


def reference_line_costs(points: FloatArray) -> FloatArray:
    x = np.arange(points.shape[1], dtype=float)
    i, j = np.triu_indices(points.shape[1], k=1)
    slope = np.median((points[:, j] - points[:, i]) / (x[j] - x[i]), axis=1)
    intercept = np.median(points - slope[:, None] * x, axis=1)
    line = intercept[:, None] + slope[:, None] * x
    return np.asarray(np.sum(np.abs(points - line), axis=1), dtype=float)


def neighbourhoods(rng: np.random.Generator, rows: int, size: int) -> FloatArray:
    """Noisy levels with steps, clock dips, ties (rounded values) and constant rows."""
    level = rng.uniform(30, 90, (rows, 1))
    points = level * (1 + rng.choice([0.0, 0.002, 0.02, 0.1]) * rng.standard_normal((rows, size)))
    points[rng.random((rows, size)) < 0.05] *= 0.8
    step = rng.integers(0, size, rows)
    points[np.arange(size)[None, :] >= step[:, None]] *= float(rng.choice([0.9, 1.0, 1.2]))
    if rng.random() < 0.3:
        points = np.round(points, int(rng.integers(0, 2)))
    points[rng.random(rows) < 0.1] = 50.0
    return points


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("seed", range(4))
def test_seeded_neighbourhoods_place_and_cost_the_same_bits(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for size in [4, 5, 7, 8, 9, 16, 17, 31, 33, 64, 65, 100, 127, 128, *rng.integers(4, 129, 6)]:
        points = neighbourhoods(rng, int(rng.integers(1, 24)), int(size))
        for min_segment in (1, 2, 3):
            if size < 2 * min_segment:
                continue
            split, cost = placement.best_splits(points, min_segment)
            want_split, want_cost = reference_best_splits(points, min_segment)
            assert same_bits(split, want_split) and same_bits(cost, want_cost)
        assert same_bits(placement.line_costs(points), reference_line_costs(points))


def test_more_than_255_points_count_in_wider_integers() -> None:
    points = neighbourhoods(np.random.default_rng(9), 3, 300)
    split, cost = placement.best_splits(points, 2)
    want_split, want_cost = reference_best_splits(points, 2)
    assert same_bits(split, want_split) and same_bits(cost, want_cost)
    assert same_bits(placement.line_costs(points), reference_line_costs(points))


rows_of_points = st.integers(1, 6).flatmap(
    lambda rows: st.integers(4, 40).flatmap(
        lambda size: hnp.arrays(
            float,
            (rows, size),
            elements=st.one_of(
                st.sampled_from([0.0, -0.0, 1.0, 2.5, 1e300, -1e300, np.inf, -np.inf]),
                st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
            ),
        )
    )
)


@settings(max_examples=150)
@given(points=rows_of_points, min_segment=st.integers(1, 2))
@np.errstate(invalid="ignore")  # infinities: inf - inf in both
def test_drawn_points_place_and_cost_the_same(points: FloatArray, min_segment: int) -> None:
    split, cost = placement.best_splits(points, min_segment)
    want_split, want_cost = reference_best_splits(points, min_segment)
    assert np.array_equal(split, want_split)
    assert np.array_equal(cost, want_cost, equal_nan=True)
    lines, want_lines = placement.line_costs(points), reference_line_costs(points)
    assert np.array_equal(lines, want_lines, equal_nan=True)
    finite = np.isfinite(want_lines)
    assert same_bits(lines[finite], want_lines[finite])


def series(seed: int, rows: int, nights: int) -> FloatArray:
    rng = np.random.default_rng(seed)
    noise = rng.choice([0.005, 0.02, 0.08], (rows, 1))
    values = rng.uniform(30, 90, (rows, 1)) * (1 + noise * rng.standard_normal((rows, nights)))
    values[rng.random((rows, nights)) < 0.02] *= 0.8
    at = rng.integers(5, nights - 3, rows)
    after = np.arange(nights)[None, :] >= at[:, None]
    values *= np.where(after, rng.choice([0.85, 0.9, 1.1], (rows, 1)), 1.0)
    values[rng.random((rows, nights)) < 0.03] = np.nan
    return values


@pytest.mark.parametrize(
    "options",
    [
        ChangePointOptions(),
        ChangePointOptions(detrend=False),
        ChangePointOptions(min_segment=1, windows=(4, 12)),
        ChangePointOptions(min_segment=3, windows=(8, 100)),
    ],
)
def test_the_scan_is_the_same_bits_as_with_the_reference_placement(
    options: ChangePointOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    scans = []
    for values in (series(7, 120, 365), series(8, 60, 40)):
        scans.append(change_points_many(values, options=options))
        with monkeypatch.context() as patched:
            patched.setattr(placement, "best_splits", reference_best_splits)
            patched.setattr(placement, "line_costs", reference_line_costs)
            scans.append(change_points_many(values, options=options))
    assert all(int(scan.is_change.sum()) > 5 for scan in scans)
    for got, want in zip(scans[::2], scans[1::2], strict=True):
        for name in ("is_change", "z", "relative_change", "noise", "drift"):
            assert same_bits(getattr(got, name), getattr(want, name))


def test_blocks_placed_together_are_the_same_bits_as_block_by_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    values = series(9, 90, 200)
    together = change_points_many(values, block_rows=7)
    monkeypatch.setattr(changepoints, "BLOCKS_PLACED_TOGETHER", 1)
    alone = change_points_many(values, block_rows=7)
    assert int(alone.is_change.sum()) > 5
    for name in ("is_change", "z", "relative_change", "noise", "drift"):
        assert same_bits(getattr(together, name), getattr(alone, name))


def eager_refine(
    shape: tuple[int, ...],
    candidates: tuple[np.ndarray, np.ndarray],
    strength: FloatArray,
    placed: placement.Placed,
    gap: int,
) -> np.ndarray:
    """Every candidate checked against a drift first, then merged strongest first."""
    refined = np.zeros(shape, dtype=bool)
    rows = candidates[0]
    stands = placed.stands(np.arange(rows.size))
    order = np.argsort(-strength, kind="stable")
    order = order[stands[order]]
    for row, target in zip(map(int, rows[order]), map(int, placed.targets[order]), strict=True):
        if not refined[row, max(0, target - gap + 1) : target + gap].any():
            refined[row, target] = True
    return refined


def drifting(seed: int, rows: int, nights: int) -> FloatArray:
    """Series with slow drifts and bends (whose candidates a line fits), steps and dips."""
    rng = np.random.default_rng(seed)
    values = series(seed, rows, nights)
    t = np.arange(nights) / nights
    bend = rng.integers(0, nights, (rows, 1))
    slope = rng.choice([0.0, 0.1, -0.2, 0.3], (rows, 1))
    return values * (1 + slope * np.maximum(0.0, t - bend / nights))


@pytest.mark.parametrize("seed", [11, 12])
def test_drift_checks_made_on_demand_merge_as_checking_every_candidate(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    values = drifting(seed, 150, 200)
    got = change_points_many(values)
    monkeypatch.setattr(changepoints, "_refine", eager_refine)
    want = change_points_many(values)
    assert int(want.is_change.sum()) > 10
    assert same_bits(got.is_change, want.is_change)
