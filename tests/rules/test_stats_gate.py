"""rules.stats gate: judge_latest (nightly, confirmed level changes) and the PR gate."""

from __future__ import annotations

import math

import numpy as np
import pytest

import rules.stats as stats
from rules.stats import (
    GateOptions,
    current_levels,
    judge_latest,
    judge_latest_many,
    judge_measurement,
    nightly_z,
)


def history(n: int = 30, noise: float = 0.01, seed: int = 0, level: float = 80.0) -> np.ndarray:
    return level * (1 + noise * np.random.default_rng(seed).standard_normal(n))


def test_a_stable_night_is_unchanged() -> None:
    j = judge_latest([*history(), 80.3])
    assert not (j.regressed or j.suspect or j.improved)
    assert j.level == pytest.approx(80.0, rel=0.01) and j.enough and j.n == 30


def test_one_bad_night_is_suspect_and_a_normal_night_clears_it() -> None:
    base = history()
    dip = judge_latest([*base, 70.0])
    assert dip.suspect and not dip.regressed and dip.run == 1
    assert dip.relative_change == pytest.approx(70 / dip.level - 1)
    assert dip.z < -dip.z_threshold
    after = judge_latest([*base, 70.0, 80.2])
    assert not (after.suspect or after.regressed)


def test_the_second_night_confirms_a_drop_then_the_new_level_is_judged() -> None:
    base = history()
    confirmed = judge_latest([*base, 72.0, 72.3])
    assert confirmed.regressed and not confirmed.suspect and confirmed.run == 2
    assert confirmed.level == pytest.approx(80.0, rel=0.01)  # judged against the old level
    for tail in ([72.0, 72.3, 71.9], [72.0, 72.3, 71.9, 72.2], [72.0, 72.3, 71.9, 72.2, 72.1]):
        later = judge_latest([*base, *tail])
        assert not (later.regressed or later.suspect), tail  # no alert on the old level
        assert later.level == pytest.approx(72.1, rel=0.01)
    blind = judge_latest([*base, 72.0, 72.3, 71.9, 64.0, 64.2])
    assert blind.regressed  # a second drop after the first is still found


def test_confirm_runs_is_configurable() -> None:
    base = history()
    three = GateOptions(confirm_runs=3)
    assert not judge_latest([*base, 72.0, 72.3], options=three).regressed
    assert judge_latest([*base, 72.0, 72.3, 71.8], options=three).regressed
    assert judge_latest([*base, 72.0], options=GateOptions(confirm_runs=1)).regressed


def test_direction_and_improvements() -> None:
    base = history()
    assert judge_latest([*base, 88.0, 88.4]).improved
    times = history(level=10.0)
    assert judge_latest([*times, 11.5, 11.6], higher_is_better=False).regressed
    assert judge_latest([*times, 8.5, 8.6], higher_is_better=False).improved


def test_too_little_history_gives_no_verdict() -> None:
    j = judge_latest([80.0, 81.0, 40.0])
    assert not j.enough and not (j.regressed or j.suspect)
    assert not judge_latest([]).enough
    assert math.isnan(judge_latest([math.nan]).level)


def test_the_threshold_grows_with_the_number_of_kernels_judged() -> None:
    one, fleet = nightly_z(GateOptions(), 30), nightly_z(GateOptions(family_size=2000), 30)
    huge = nightly_z(GateOptions(family_size=10**6), 30)
    assert one == GateOptions().nightly_floor and one < fleet < huge
    # A noise estimated from fewer nights is less certain: the threshold is higher.
    assert nightly_z(GateOptions(family_size=2000), 10) > fleet


def test_many_series_at_once_match_one_at_a_time() -> None:
    series = [[*history(seed=s), 80 - 8 * (s % 2), 80 - 8 * (s % 2)] for s in range(6)]
    batch = judge_latest_many(series)
    assert [j.regressed for j in batch] == [judge_latest(s).regressed for s in series]
    assert [j.regressed for j in batch] == [False, True] * 3


def test_pr_gate_screens_confirms_and_clears() -> None:
    (level,) = current_levels([history()])
    screen = judge_measurement(level, 70.0, mode="screen")
    assert screen.suspect and not screen.regressed
    huge = judge_measurement(level, 50.0, mode="screen")
    assert huge.suspect and not huge.regressed  # --suspects: nothing fails on one measurement
    assert judge_measurement(level, 50.0, mode="single").regressed  # far beyond noise
    assert not judge_measurement(level, 70.0, mode="single").regressed
    real = judge_measurement(level, 70.0, [70.5], mode="confirm")
    assert real.regressed and real.remeasured == (70.5,) and real.remeasured_z < -4
    dip = judge_measurement(level, 70.0, [80.1], mode="confirm")
    assert not (dip.regressed or dip.suspect)  # the re-measurement was normal: a one-off
    pooled = judge_measurement(level, 70.0, [60.0, 80.1], mode="confirm")
    assert not pooled.regressed  # a dip and a normal value are not a confirmation


def test_pr_gate_judges_against_the_level_since_the_last_change() -> None:
    base = np.concatenate([history(20), history(20, seed=1) * 0.85])
    (level,) = current_levels([base])
    assert level.level == pytest.approx(68.0, rel=0.01)
    assert not judge_measurement(level, 68.2, mode="single").suspect


def test_every_public_name_is_exported() -> None:
    for name in stats.__all__:
        assert hasattr(stats, name), name


def test_the_noise_model_describes_the_noise_estimate() -> None:
    # The joint thresholds' two constants, checked by simulating the estimate on t(4) noise.
    from scipy.special import chdtri

    from rules.stats.constants import LOWER_TAIL_NOISE_EFFICIENCY, MAD_SCALE, NOISE_BIAS
    from rules.stats.levels import level_of, segment_starts

    rng = np.random.default_rng(5)
    rows = list(100 + rng.standard_t(4, size=(2000, 30)))
    _, noise = segment_starts(rows, 2)
    robust = MAD_SCALE * 0.7407  # the robust spread of t(4): its quartile is 0.7407
    spread = [level_of(r, 0, float(n), 0.0).noise for r, n in zip(rows, noise, strict=True)]
    ratio = np.array(spread) / robust
    assert np.median(ratio) == pytest.approx(NOISE_BIAS, rel=0.04)
    nu = LOWER_TAIL_NOISE_EFFICIENCY * 29
    model_q01 = math.sqrt(chdtri(nu, 0.99) / chdtri(nu, 0.5))
    # The model's lower tail is at least as heavy as the estimate's (conservative), not far off.
    assert model_q01 * 0.95 <= np.quantile(ratio, 0.01) / np.median(ratio) <= model_q01 * 1.15


def test_nights_judged_against_one_estimate_are_not_independent_tests() -> None:
    from rules.stats.gate import effective_df, stage_z

    opts = GateOptions(family_size=2000)
    independent = stage_z((0.05 / 2000) ** 0.5, effective_df(opts, 15))
    assert nightly_z(opts, 15, 0.3) > independent  # few nights: the shared estimate counts
    assert nightly_z(opts, 15, 0.6) > nightly_z(opts, 15, 0.0)


def test_a_pr_re_measurement_that_disagrees_with_the_first_is_no_confirmation() -> None:
    (level,) = current_levels([history(noise=0.005)])
    # A noise suspect (-3%), then a clock dip (-20%): each beyond noise, far apart.
    dipped = judge_measurement(level, 77.4, [64.0], mode="confirm")
    assert not dipped.regressed and dipped.suspect  # still named, as a warning
    agree = judge_measurement(level, 70.0, [70.8], mode="confirm")
    assert agree.regressed


def test_no_histories_have_no_levels() -> None:
    assert current_levels([]) == []


def test_a_pr_improvement_is_claimed_only_far_beyond_noise() -> None:
    """Nothing re-measures a kernel that looks better: one heavy-tailed value of 2,000 must
    not make a PR that changed nothing read "improved"; a 30% speed-up still does."""
    from rules.stats import compare_to_baseline

    rng = np.random.default_rng(3)
    rows = list(80 * (1 + 0.01 * rng.standard_t(3, size=(2000, 30))))
    now = 80 * (1 + 0.01 * rng.standard_t(3, size=2000))
    per_value = sum(compare_to_baseline(r, v).improved for r, v in zip(rows, now, strict=True))
    levels = current_levels(rows)
    judged = [judge_measurement(lv, v) for lv, v in zip(levels, now, strict=True)]
    assert per_value >= 5 and not any(j.improved for j in judged)
    assert judge_measurement(levels[0], 104.0).improved
    assert not judge_measurement(levels[0], 90.0).improved  # 12%: left to the nightly runs
