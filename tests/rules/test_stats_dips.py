"""rules.stats.dips: without a re-measure step, a drop far beyond the kernel's own dips fails."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from numpy.lib.stride_tricks import sliding_window_view

from rules.stats import GateOptions, current_levels, judge_measurement, largest_dip, own_dips
from rules.stats.constants import DIP_WINDOW
from rules.stats.dips import _cleaned, _window_medians
from rules.stats.levels import clean


def quiet(n: int = 60, seed: int = 0) -> np.ndarray:
    """A kernel whose nights never strayed more than about 3% (0.8% noise)."""
    return 70.0 * (1 + 0.008 * np.random.default_rng(seed).standard_normal(n))


def single(history: np.ndarray, value: float) -> tuple[bool, bool]:
    (level,) = current_levels([history])
    (own,) = own_dips([history], GateOptions())
    judged = judge_measurement(level, value, mode="single", own_dips=own)
    return judged.regressed, judged.suspect


def test_a_drop_far_beyond_every_night_of_the_kernel_fails_at_once() -> None:
    history = quiet()
    assert largest_dip(history) < 0.03
    assert single(history, 70.0 * 0.85) == (True, False)  # 15%: 25% was the bar before


def test_a_drop_its_history_says_a_dip_can_explain_waits_for_a_re_measurement() -> None:
    history = quiet()
    history[30] *= 0.9  # one night 10% low, 30 nights ago
    assert single(history, 70.0 * 0.85) == (False, True)


def test_a_step_between_two_levels_is_no_dip() -> None:
    history = np.concatenate([quiet(30, seed=1), quiet(30, seed=2) * 0.8])
    assert largest_dip(history) < 0.03


def test_too_few_nights_teach_nothing() -> None:
    assert math.isnan(largest_dip(quiet(10)))
    assert single(quiet(10), 70.0 * 0.85) == (False, True)


def test_a_fleet_whose_nights_jump_beyond_their_own_history_learns_nothing() -> None:
    """Clock dips spread over the fleet: no kernel's own history shows the next one."""
    fleet = [quiet(seed=s) for s in range(20)]
    for row in fleet[:3]:
        row[20] *= 0.7
    assert all(math.isnan(d.largest) for d in own_dips(fleet, GateOptions()))
    assert not any(math.isnan(d.largest) for d in own_dips(fleet[3:], GateOptions()))


def test_a_return_to_a_level_the_kernel_held_is_no_drop_beyond_its_history() -> None:
    """A runner with two modes, or a kernel back at its level of a month ago: a suspect."""
    history = np.concatenate([quiet(30, seed=1) * 0.85, quiet(30, seed=2)])
    assert single(history, 70.0 * 0.85) == (False, True)


def test_the_window_medians_of_a_block_are_numpys_medians_of_each_window() -> None:
    rng = np.random.default_rng(5)
    ties = rng.integers(0, 3, size=(40, 30)).astype(float)
    spread = rng.lognormal(0, 0.5, size=(40, 61))
    spread[rng.random(spread.shape) < 0.05] = np.inf
    for values in (ties, spread):
        windows = sliding_window_view(values, DIP_WINDOW, axis=1)
        assert np.array_equal(_window_medians(values), np.median(windows, axis=2))


def test_histories_are_cleaned_at_once_as_one_by_one() -> None:
    rng = np.random.default_rng(6)
    histories: list[npt.ArrayLike] = [
        np.where(rng.random(20) < 0.2, np.nan, rng.random(20)) for _ in range(30)
    ]
    histories.append([])
    for history, cleaned in zip(histories, _cleaned(histories), strict=True):
        assert np.array_equal(cleaned, clean(history))
