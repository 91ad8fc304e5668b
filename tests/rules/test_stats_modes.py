"""Two-level kernels (``rules.stats.modes``): a night at the other mode is not a drop."""

from __future__ import annotations

import numpy as np
import pytest

from rules.stats import Modes, judge_latest, mode_words, modes, two_modes, visit_words
from rules.stats.options import GateOptions

#: Stays of a sticky two-state runner: 0 at 71% of roof, 1 at 62%.
STAYS = [0] * 6 + [1] * 5 + [0] * 7 + [1] * 4 + [0] * 6 + [1] * 5 + [0] * 8


def two_level(seed: int = 3, noise: float = 0.01) -> np.ndarray:
    rng = np.random.default_rng(seed)
    levels = np.where(np.array(STAYS) == 1, 62.0, 71.0)
    return levels * (1 + noise * rng.standard_normal(levels.size))


def test_a_sticky_two_state_history_is_two_modes() -> None:
    modes = two_modes(two_level())
    assert modes is not None
    assert modes.low == pytest.approx(62.0, rel=0.01)
    assert modes.high == pytest.approx(71.0, rel=0.01)
    assert modes.low_share == pytest.approx(14 / 41)
    assert modes.stays == 7


def test_one_stay_at_the_other_mode_that_returned_makes_two_modes() -> None:
    """Two switches (71% -> 62% -> 71%) are a mixture; one switch alone is a step (below)."""
    stays = np.r_[np.zeros(10), np.ones(6), np.zeros(10)]
    levels = np.where(stays == 1, 62.0, 71.0)
    history = levels * (1 + 0.01 * np.random.default_rng(5).standard_normal(levels.size))
    modes = two_modes(history)
    assert modes is not None and modes.stays == 3
    assert modes.low == pytest.approx(62.0, rel=0.01)


@pytest.mark.parametrize(
    "history",
    [
        np.full(30, 55.0),  # constant
        np.array([62.0, 71.0, 62.0, 71.0, 62.0, 71.0]),  # too short to tell modes apart
        np.r_[np.full(15, 71.0), np.full(15, 62.0)] + np.tile([0.2, -0.2], 15),  # one step
        np.random.default_rng(1).normal(70.0, 0.7, 40),  # one level with noise
    ],
)
def test_short_constant_one_step_and_one_level_histories_have_no_modes(
    history: np.ndarray,
) -> None:
    assert two_modes(history) is None


@pytest.mark.parametrize("seed", [3, 5, 9])
def test_one_noisy_level_split_in_two_is_no_two_modes(seed: int) -> None:
    """Split at its middle, one level at 4% noise has parts about half its noise wide, so
    its "modes" look far apart in their own spreads; in night-to-night noise they are not."""
    history = 70.0 * (1 + 0.04 * np.random.default_rng(seed).standard_normal(40))
    assert two_modes(history) is None


def test_a_night_at_the_other_mode_is_no_suspect_and_says_why() -> None:
    judged = judge_latest(np.append(two_level(), 62.3))
    assert not judged.suspect and not judged.regressed
    assert judged.modes is not None
    assert mode_words(judged.modes, judged.current) == (
        "alternates between 62% and 71% of roof; tonight 62%, the usual low mode"
    )


@pytest.mark.parametrize("tonight", [82.0, 52.0])
def test_a_night_past_both_modes_is_not_described_as_one(tonight: float) -> None:
    """82% read "alternates between 62% and 71% of roof; tonight 82%, above the usual high
    mode" (an info finding), as if the kernel lived there."""
    judged = judge_latest(np.append(two_level(), tonight))
    assert abs(judged.z) >= judged.z_threshold
    assert judged.modes is None


def test_a_stay_at_the_other_mode_is_not_confirmed() -> None:
    history = np.append(two_level(), [62.3, 61.8, 62.5])
    for night in range(history.size - 3, history.size + 1):
        judged = judge_latest(history[:night])
        assert not judged.regressed, night


def test_a_drop_below_both_modes_is_still_found() -> None:
    history = np.append(two_level(), [55.0, 54.6])
    assert judge_latest(history[:-1]).suspect
    assert judge_latest(history).regressed


def quiet(nights: int, seed: int = 5) -> np.ndarray:
    return 70.0 * (1 + 0.01 * np.random.default_rng(seed).standard_normal(nights))


def test_a_burst_whose_nights_disagree_is_not_confirmed() -> None:
    history = np.append(quiet(30), [52.0, 66.0])  # 26% slow, then 6% slow: each its own dip
    assert not judge_latest(history).regressed


def test_a_drop_whose_nights_agree_is_confirmed() -> None:
    history = np.append(quiet(30), [60.0, 60.5])
    assert judge_latest(history).regressed


def _young(first: float, other: float, first_nights: int, other_nights: int) -> list[float]:
    rng = np.random.default_rng(5)
    levels = [first] * first_nights + [other] * other_nights
    return list(np.asarray(levels) * (1 + 0.005 * rng.standard_normal(len(levels))))


def test_a_young_runner_back_at_a_mode_it_stayed_at_is_no_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two nights at 62, six at 71, back at 62: too few stays for two modes, but the run's
    first night makes them, and the kernel stayed at 62 before (``back_at_a_mode``)."""
    history = [*_young(62.0, 71.0, 2, 6), 62.1, 61.9]
    assert two_modes(np.asarray(history[:-2])) is None
    assert not judge_latest(history).regressed
    monkeypatch.setattr(modes, "MIN_MODE_STAY", 99)  # no stay is long enough: a change
    assert judge_latest(history).regressed


def test_a_young_runners_stay_that_scatters_is_no_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same history, but the two nights at 62 are read as scattering (``MODE_STAY_Z``):
    a burst at a drop's depth, not a level, so the run back at 62 is a change."""
    history = [*_young(62.0, 71.0, 2, 6), 62.1, 61.9]
    monkeypatch.setattr(modes, "MODE_STAY_Z", 1e-6)
    assert judge_latest(history).regressed


def test_a_one_night_outlier_at_a_drops_depth_makes_no_mode() -> None:
    """An outlier at 50 on one night, then a drop to 50 that stays: a change. (A drop back to
    a level held for long after a settled rise is one too: ``test_stats_runs``.)"""
    history = _young(62.0, 62.0, 30, 0)
    history[12] = 50.0
    drop = [*history, 50.1, 49.9]
    assert judge_latest(drop).regressed


#: Longer stays than ``STAYS`` (no stay at 62 reads as a burst among the 71s).
LONG_STAYS = [0] * 8 + [1] * 6 + [0] * 8 + [1] * 7 + [0] * 8 + [1] * 6 + [0] * 7


def _after_a_change(factor: float, tail: list[float], seed: int = 7) -> np.ndarray:
    """A 71 / 62 runner, then a change by ``factor`` (12 nights at its high mode), then ``tail``."""
    rng = np.random.default_rng(seed)
    levels = np.where(np.array(LONG_STAYS) == 1, 62.0, 71.0)
    before = levels * (1 + 0.01 * rng.standard_normal(levels.size))
    after = factor * 71.0 * (1 + 0.01 * rng.standard_normal(12))
    last = np.asarray(tail) * (1 + 0.01 * rng.standard_normal(len(tail)))
    return np.r_[before, after, last]


def test_the_modes_carried_across_a_change_keep_their_ratio() -> None:
    history = _after_a_change(0.8, [])
    moved = modes.carried(history[: len(LONG_STAYS)], 0.8 * 71.0, -1, GateOptions())
    assert moved is not None
    assert moved.high == pytest.approx(0.8 * 71.0)
    assert moved.low == pytest.approx(0.8 * 62.0, rel=0.01)


@pytest.mark.parametrize("factor", [0.8, 1.25])
def test_a_stay_at_the_other_mode_after_a_change_is_not_confirmed(
    factor: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the change the segment sits at its high mode; four nights at the low mode (62
    times the factor) are a stay there, read with the modes before the change (``carried``)."""
    history = _after_a_change(factor, [factor * 62.0] * 4)
    first = history.size - 4
    assert not any(judge_latest(history[:n]).regressed for n in range(first, history.size + 1))
    monkeypatch.setattr(modes, "MODE_CARRY_SEPARATION", 1e9)  # nothing carried: a change
    assert any(judge_latest(history[:n]).regressed for n in range(first, history.size + 1))


def test_a_drop_below_both_carried_modes_is_still_found() -> None:
    history = _after_a_change(0.8, [0.8 * 55.0] * 2)
    assert judge_latest(history).regressed


def test_modes_are_not_carried_to_a_segment_at_one_of_them() -> None:
    """A segment that starts at a switch to the low mode is the runner's state, not a change:
    carried, its level read as the high mode and invented a low one a gap below."""
    before = _after_a_change(1.0, [])[: len(LONG_STAYS)]
    kept = modes.carried(before, 62.0, -1, GateOptions())
    assert kept is not None
    assert kept.low == pytest.approx(62.0, rel=0.01) and kept.high == pytest.approx(71.0, rel=0.01)


#: Percent of roof of a two-level kernel (modes 64.5 / 71.6) on a probed runner's 86 nights,
#: 12% slower from night 70: its high state lands on the old low mode, then four nights at
#: 57% lie below both modes. The change detector started a segment at night 62, a switch to
#: the low mode; carried, that segment's modes excused the four nights as a stay at 58%.
_TWO_STATE_NIGHTS = """
72.23 72.45 71.64 71.14 71.63 71.13 71.78 71.01 70.99 64.5 63.52 64.33 64.38 65.03 64.62
71.32 72.83 71.41 71.63 71.68 73.5 71.95 71.42 72.43 64.38 66.0 64.0 64.86 63.88 65.64
63.99 64.59 71.3 72.55 72.33 70.3 64.97 64.89 64.61 72.62 71.03 70.66 72.39 73.14 71.05
71.09 71.29 71.06 65.0 64.54 65.34 65.36 63.81 64.87 70.28 71.83 72.34 71.31 70.61 71.53
72.76 71.61 63.56 64.75 64.94 63.79 64.34 65.15 72.15 72.43 63.99 64.11 63.45 57.12 58.44
57.3 57.02
"""
TWO_STATE_DROP = [float(v) for v in _TWO_STATE_NIGHTS.split()]


def test_a_drop_below_both_modes_after_a_switch_is_confirmed() -> None:
    nights = [judge_latest(TWO_STATE_DROP[n - 59 : n + 1]) for n in range(62, 77)]
    assert not any(j.regressed for j in nights[:11]), "switches and the stay at 64% pass"
    assert any(j.regressed for j in nights[11:]), "the nights at 57% confirm"


def test_a_young_runners_earlier_stay_may_be_twice_as_long_as_the_other(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nine nights at 62, six at 71, back at 62: the stay at 62 lasted longer than the one at
    71, but not ``MODE_STAY_RATIO`` times as long: it alternates."""
    history = [*_young(62.0, 71.0, 9, 6), 62.1, 61.9]
    assert not judge_latest(history).regressed
    monkeypatch.setattr(modes, "MODE_STAY_RATIO", 1.0)  # no longer than the other: a change
    assert judge_latest(history).regressed


def _one_level_then_two(seed: int = 0) -> np.ndarray:
    """20 nights at 70, then a runner alternating 60 / 50.4 (a drop), back at 50.4 for two."""
    rng = np.random.default_rng(seed)
    stays = [70.0] * 20 + [60.0] * 8 + [50.4] * 3 + [60.0] * 7 + [50.4] * 3 + [60.0] * 6
    levels = np.array([*stays, 50.4, 50.4])
    return levels * (1 + 0.005 * rng.standard_normal(levels.size))


def test_a_stay_at_a_mode_of_the_segment_itself_is_not_confirmed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The window mixes three levels (no modes), the nights before the change are one level
    (nothing carried): only the segment's own modes (``segment_modes``) say it alternates."""
    history = _one_level_then_two()
    assert two_modes(history[:-2]) is None
    assert not judge_latest(history).regressed
    monkeypatch.setattr(modes, "segment_modes", lambda *_: None)
    assert judge_latest(history).regressed


@pytest.mark.parametrize("seed", [0, 3])
def test_a_drop_between_the_modes_and_far_from_each_is_found(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 6% drop of a runner alternating 71 / 62 puts its high mode at 66.5: at neither mode
    (``Modes.off``, ``MODE_OFF_Z`` spreads from each), so a change, not a stay."""
    rng = np.random.default_rng(seed)
    levels = np.r_[np.where(np.array(STAYS) == 1, 62.0, 71.0), [66.5] * 4]
    history = levels * (1 + 0.005 * rng.standard_normal(levels.size))
    nights = range(len(STAYS) + 1, history.size + 1)
    assert judge_latest(history[: len(STAYS) + 1]).suspect
    assert any(judge_latest(history[:n]).regressed for n in nights)
    monkeypatch.setattr(modes, "MODE_OFF_SWITCHES", 10**9)  # between the modes: a stay
    assert not any(judge_latest(history[:n]).regressed for n in nights)


def test_the_words_say_below_a_mode_when_the_value_is_not_at_it() -> None:
    """A night 3.5 spreads under a mode the gate excused read "tonight 74%, at the 77%"."""
    found = Modes(low=76.6, high=78.8, low_share=0.2, spread=0.8, stays=3, nights=15)
    otherwise = "it held once before (79% of roof otherwise)"
    assert visit_words(found, 76.9) == f"tonight 77%, at the 77% {otherwise}"
    assert visit_words(found, 73.8) == f"tonight 74%, below the 77% {otherwise}"
    assert mode_words(found, 73.8).endswith("tonight 74%, below the usual low mode")
    assert mode_words(found, 80.5).endswith("tonight 80%, above the usual high mode")
    assert mode_words(found, 78.5).endswith("tonight 78%, the usual high mode")
