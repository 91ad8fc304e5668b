"""A kernel's own bursts choose how many nights confirm a change (``rules.stats.bursts``)."""

from __future__ import annotations

import numpy as np
import pytest

from rules.stats import current_levels, judge_latest, judge_measurement, runs
from rules.stats.bursts import Bursts, bursts

LEVEL = 55.0


def quiet(n: int, seed: int = 3) -> list[float]:
    rng = np.random.default_rng(seed)
    return list(LEVEL * (1 + 0.005 * rng.standard_normal(n)))


def with_burst(history: list[float], at: int, depths: list[float]) -> list[float]:
    out = list(history)
    for i, d in enumerate(depths):
        out[at + i] = LEVEL * (1 - d)
    return out


# 40 quiet nights with a three-night burst 20-26% slow at night 20, and back.
BURSTY = with_burst(quiet(40), 20, [0.20, 0.26, 0.23])


def test_a_burst_that_came_back_is_found_on_its_side() -> None:
    found = bursts(np.asarray(BURSTY), -1)
    assert found.nights == 3
    assert 0.19 < found.shallowest < 0.21 and 0.2 < found.deep < 0.26
    assert bursts(np.asarray(BURSTY), 1) == Bursts()  # none above the level
    assert bursts(np.asarray(quiet(40)), -1) == Bursts()


def test_a_run_as_deep_as_the_kernels_bursts_must_outlast_them() -> None:
    found = bursts(np.asarray(BURSTY), -1)
    burst_like = np.asarray([LEVEL * 0.78, LEVEL * 0.77])
    assert not found.outlasts(burst_like, LEVEL)
    assert found.outlasts(np.asarray([LEVEL * 0.78] * 4), LEVEL)  # longer than the longest
    assert found.outlasts(np.asarray([LEVEL * 0.5] * 2), LEVEL)  # deeper than its bursts
    assert found.outlasts(np.asarray([LEVEL * 0.95] * 2), LEVEL)  # shallower than every night


def test_a_second_burst_like_the_first_is_no_change(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two nights 22-23% slow on a kernel whose history held such a burst: no regression yet."""
    history = [*BURSTY, LEVEL * 0.78, LEVEL * 0.775]
    assert not judge_latest(history).regressed
    monkeypatch.setattr(runs, "bursts", lambda values, sign: Bursts())
    assert judge_latest(history).regressed  # without the kernel's bursts it confirms


def test_a_drop_that_stays_is_confirmed_once_it_outlasts_the_bursts() -> None:
    history = [*BURSTY, *([LEVEL * 0.78] * 4)]
    judged = [judge_latest(history[: len(BURSTY) + k]).regressed for k in range(1, 5)]
    assert judged == [False, False, False, True]


@pytest.mark.parametrize("history", [[LEVEL] * 30, [LEVEL] * 5, quiet(17), []])
def test_constant_and_short_histories_have_no_bursts(history: list[float]) -> None:
    assert bursts(np.asarray(history, dtype=float), -1) == Bursts()


def _first_confirmed(base: list[float], after: list[float], *, higher_is_better: bool) -> int:
    """The night (1 = the first after ``base``) the gate confirms the change of ``after``."""
    for k in range(1, len(after) + 1):
        judged = judge_latest([*base, *after[:k]], higher_is_better=higher_is_better)
        if judged.regressed:
            return k
    return 0


def test_a_change_is_confirmed_on_the_same_night_as_time_and_as_percent_of_roof() -> None:
    """A GEMM off the tensor cores, 14x slower, its two nights 1% apart: a change that agrees.

    Held to the old level's noise in milliseconds (0.2 ms of 44 ms), the pair read 6 ms apart
    and waited for a third night, then a fourth; as percent of roof the same nights read 0.06
    apart and confirmed on the second. A kernel group's time waited so until its percent of
    roof had taken the new level, then failed on a stable night.
    """
    times = [0.044 * x / LEVEL for x in quiet(17)]
    slow = [0.6008, 0.6065, 0.6045, 0.6028]
    assert _first_confirmed(times, slow, higher_is_better=False) == 2
    percent = [80.0 * times[0] / t for t in times]
    fallen = [80.0 * times[0] / t for t in slow]
    assert _first_confirmed(percent, fallen, higher_is_better=True) == 2


def test_a_pr_re_measurement_of_a_much_slower_kernel_agrees_in_its_own_noise() -> None:
    """14x slower on a PR, re-measured 1% apart: confirmed, as it is in percent of roof."""
    (level,) = current_levels([[0.044 * x / LEVEL for x in quiet(30)]])
    slow = judge_measurement(level, 0.6008, [0.6065], higher_is_better=False, mode="confirm")
    assert slow.regressed
