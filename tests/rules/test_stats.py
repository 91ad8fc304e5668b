"""rules.stats: robust comparison with a baseline, and change points in nightly series."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rules.stats import (
    ChangePointOptions,
    CompareOptions,
    change_points,
    change_points_many,
    compare_to_baseline,
    judge_latest,
    robust_center_spread,
)
from rules.stats.windows import _one_scale, _series_noise


def noisy(n: int, noise: float, seed: int = 0, level: float = 80.0) -> np.ndarray:
    return level * (1 + noise * np.random.default_rng(seed).standard_normal(n))


# --- compare_to_baseline ----------------------------------------------------------------


def test_real_five_percent_drop_on_one_percent_noise_is_caught() -> None:
    base = noisy(14, 0.01)
    result = compare_to_baseline(base, np.median(base) * 0.95)
    assert result.regressed and not result.improved
    assert result.relative_change == pytest.approx(-0.05)
    assert result.n == 14 and result.enough
    assert result.z < -4


def test_drop_within_the_noise_is_not_a_regression() -> None:
    base = noisy(14, 0.04, seed=3)
    result = compare_to_baseline(base, np.median(base) * 0.96)
    assert not result.regressed


def test_outlier_nights_in_the_baseline_change_nothing() -> None:
    base = noisy(14, 0.01, seed=1)
    spiky = base.copy()
    spiky[[2, 9]] *= [0.6, 1.4]
    clean, dirty = compare_to_baseline(base, 70.0), compare_to_baseline(spiky, 70.0)
    assert dirty.regressed == clean.regressed is True
    assert dirty.center == pytest.approx(clean.center, rel=0.01)
    assert dirty.spread < 2 * clean.spread


def test_samples_of_one_run_use_their_median() -> None:
    base = noisy(10, 0.01, seed=2)
    centre = float(np.median(base))
    samples = [centre] * 7 + [centre * 0.5] * 2  # two launches hit a clock dip
    result = compare_to_baseline(base, samples)
    assert result.samples == 9 and result.current == pytest.approx(centre)
    assert not result.regressed


def test_direction_lower_is_better_for_time() -> None:
    base = [10.0, 10.1, 9.9, 10.0, 10.05]
    assert compare_to_baseline(base, 12.0, higher_is_better=False).regressed
    faster = compare_to_baseline(base, 8.0, higher_is_better=False)
    assert faster.improved and not faster.regressed


def test_too_few_runs_gives_no_verdict() -> None:
    result = compare_to_baseline([80.0, 81.0], 40.0)
    assert not result.enough and not result.regressed and not result.improved
    assert result.relative_change == pytest.approx(40 / 80.5 - 1)
    empty = compare_to_baseline([], 40.0)
    assert math.isnan(empty.relative_change) and empty.n == 0


def test_practical_floor_and_options() -> None:
    base = [80.0] * 10  # a perfectly quiet baseline: the noise floor still applies
    assert not compare_to_baseline(base, 79.0).regressed  # -1.25% < min_effect 3%
    lower_effect = CompareOptions(min_effect=0.01)
    assert not compare_to_baseline(base, 79.0, options=lower_effect).regressed  # z = -2.3
    quiet = CompareOptions(min_effect=0.01, noise_floor=0.001)
    assert compare_to_baseline(base, 79.0, options=quiet).regressed
    with pytest.raises(ValueError, match="z_threshold"):
        CompareOptions(z_threshold=0)


def test_robust_center_spread_matches_normal_sigma() -> None:
    center, spread = robust_center_spread(noisy(20_000, 0.02, seed=5, level=100.0))
    assert center == pytest.approx(100.0, abs=0.1)
    assert spread == pytest.approx(2.0, rel=0.05)


# --- change_points ------------------------------------------------------------------------


def test_step_is_found_where_it_happened() -> None:
    series = noisy(60, 0.01, seed=4)
    series[30:] *= 0.9
    (cp,) = change_points(series)
    assert cp.index == 30 and cp.direction == "down"
    assert cp.relative_change == pytest.approx(-0.1, abs=0.01)
    assert cp.before > cp.after


@pytest.mark.parametrize(("factor", "at"), [(10, 114), (15, 100), (15, 114), (1 / 15, 100)])
def test_a_step_of_many_times_is_found_on_its_first_night(factor: float, at: int) -> None:
    """The new level's nights scatter by the same 1% of a level 15x as far from 0."""
    series = noisy(120, 0.01, seed=1, level=0.34)
    series[at:] *= factor
    (cp,) = change_points(series)
    assert cp.index == at
    assert cp.after / cp.before == pytest.approx(factor, rel=0.02)


def test_one_bad_night_is_not_a_change() -> None:
    series = noisy(60, 0.01, seed=6)
    series[25] *= 0.7
    series[59] *= 0.7  # also on the newest night
    assert change_points(series) == []


def test_two_nights_at_a_new_level_are_a_change() -> None:
    series = noisy(40, 0.01, seed=7)
    series[38:] *= 0.85
    assert [cp.index for cp in change_points(series)] == [38]


def test_min_segment_is_an_option() -> None:
    series = noisy(40, 0.01, seed=7)
    series[38:] *= 0.85
    assert change_points(series, options=ChangePointOptions(min_segment=3)) == []


def test_scattered_bad_nights_fail_the_whole_segment_check() -> None:
    # Three clock dips within five nights: the window scan alone sees a short new level, the
    # check over the whole segments on either side does not.
    series = noisy(60, 0.005, seed=5)
    series[[18, 20, 22]] *= [0.75, 0.86, 0.8]
    assert [
        cp.index for cp in change_points(series, options=ChangePointOptions(confirm_z=None))
    ] == [20]
    assert change_points(series) == []


def test_slow_drift_is_not_a_step_but_is_reported() -> None:
    series = noisy(60, 0.005, seed=8) * (1 + np.linspace(0, 0.06, 60))
    assert change_points(series) == []
    scan = change_points_many(series[None, :])
    assert scan.drift[0] == pytest.approx(80 * 0.06 / 59, rel=0.3)


def test_missing_nights_are_skipped() -> None:
    series = noisy(50, 0.01, seed=9)
    series[20:] *= 1.2
    series[[5, 21, 33]] = np.nan
    (cp,) = change_points(series)
    assert cp.index == 20 and cp.direction == "up"


def test_batch_form_agrees_with_one_series_and_takes_frames() -> None:
    rng = np.random.default_rng(10)
    rows = 80 * (1 + 0.01 * rng.standard_normal((6, 45)))
    rows[1, 15:] *= 0.8
    rows[4, 30:] *= 1.1
    frame = pd.DataFrame(rows, index=[f"k{i}" for i in range(6)])
    scan = change_points_many(frame)
    assert scan.is_change.shape == rows.shape
    found = {(int(r), int(c)) for r, c in zip(*np.nonzero(scan.is_change), strict=True)}
    assert found == {(1, 15), (4, 30)}
    for i in range(6):
        assert [cp.index for cp in change_points(rows[i])] == list(
            np.flatnonzero(scan.is_change[i])
        )


def test_a_constant_segment_then_a_step_is_a_clear_change() -> None:
    # Zero spread around both levels and a zero median: no noise at all (it divided by zero).
    series = np.r_[np.zeros(20), np.ones(10)]
    (cp,) = change_points(series)
    assert cp.index == 20 and cp.direction == "up"
    judged = judge_latest(series)
    assert judged.segment_start == 20 and not judged.suspect and not judged.regressed


def test_empty_and_short_series() -> None:
    assert change_points([]) == []
    assert change_points([1.0, 2.0, 3.0]) == []
    assert change_points_many(np.zeros((3, 0))).is_change.shape == (3, 0)


@pytest.mark.parametrize("min_segment", [1, 2, 3])
def test_a_block_narrower_than_two_segments_passes_no_window_test(min_segment: int) -> None:
    """The scan skips the windows of such a block: each scale's pass mask is empty there."""
    opts = ChangePointOptions(min_segment=min_segment)
    rng = np.random.default_rng(min_segment)
    for width in range(1, 2 * min_segment):
        values = 50 * (1 + rng.standard_normal((40, width)))
        values[rng.random(values.shape) < 0.2] = np.nan
        values[:5] = np.array([10.0, 90.0, 10.0, 90.0, 10.0][:width])  # steps as large as can be
        noise = _series_noise(values, opts.noise_floor)
        assert not any(_one_scale(values, noise, w, opts)[2].any() for w in opts.windows)
        scan = change_points_many(values, options=opts)
        assert not scan.is_change.any() and not scan.z.any() and not scan.relative_change.any()
