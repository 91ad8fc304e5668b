"""rules.stats.runs: runs of nights confirm changes, and the gate carries its segment."""

from __future__ import annotations

import numpy as np
import pytest

from rules.stats import GateOptions, judge_latest, runs
from rules.stats.levels import level_of
from rules.stats.runs import (
    KNOWN_NOISE_POINTS,
    SETTLED,
    evidence_scale,
    fewer_points,
    night_noise,
    segment_starts_by_night,
    sum_spread,
)
from rules.stats.windows import _series_noise


def noisy(n: int = 40, noise: float = 0.08, seed: int = 3, level: float = 60.0) -> np.ndarray:
    return level * (1 + noise * np.random.default_rng(seed).standard_normal(n))


def test_a_moderate_drop_on_a_noisy_kernel_is_confirmed_by_its_run() -> None:
    # 25% slower at 8% noise: about 3 noise units a night, never beyond the per-night bar.
    # 60 nights: the noise is known (a shorter history's evidence is scaled down).
    base = noisy(KNOWN_NOISE_POINTS)
    opts = GateOptions()
    drop = [45.5, 44.5, 45.0, 44.8]
    nights = [judge_latest([*base, *drop[: i + 1]], options=opts) for i in range(len(drop))]
    assert all(abs(j.z) < j.z_threshold for j in nights)  # no single night is beyond noise
    confirmed = [j.regressed for j in nights]
    assert True in confirmed and confirmed.index(True) >= 2  # a run of 3 or 4 nights confirms
    first = nights[confirmed.index(True)]
    assert first.run == confirmed.index(True) + 1
    assert first.level == pytest.approx(60.0, rel=0.05)


def test_a_short_history_does_not_confirm_two_ordinary_low_nights() -> None:
    # 8% noise, and 5 nights that came out close together: the noise looks like 2%, and
    # two ordinary nights 10% low looked like a confirmed drop 4 noise units deep.
    young = [63.0, 63.0, 58.2, 58.8, 60.6, 54.0, 52.8]
    assert judge_latest(young[:-1]).suspect
    assert not judge_latest(young).regressed
    # The same nights after 60 of that noise known: still no change, but for the noise.
    assert evidence_scale(5, 2, 4.0, 3.5) > 5
    assert evidence_scale(KNOWN_NOISE_POINTS, 2, 4.0, 3.5) == pytest.approx(1.0)


def test_a_short_history_still_confirms_a_large_drop() -> None:
    # 9 quiet nights, then two nights 16% slower: 8.7 noise units, calibrated 3.8 > 3.5.
    times = [11.8, 11.9, 11.7, 11.8, 12.0, 11.8, 11.6, 11.9, 11.8, 14.0, 14.1]
    assert judge_latest(times, higher_is_better=False).regressed


def test_without_pooling_the_same_run_is_missed() -> None:
    base, drop = noisy(KNOWN_NOISE_POINTS), [45.5, 44.5, 45.0, 44.8]
    only_pairs = GateOptions(pool_runs=2)
    assert not judge_latest([*base, *drop], options=only_pairs).regressed


def test_one_dip_cannot_carry_a_run_of_normal_nights() -> None:
    base = noisy(noise=0.01)
    # A 30% dip then nights a little low: the dip counts at most the per-night floor.
    j = judge_latest([*base, 42.0, 59.6, 59.5], options=GateOptions())
    assert not j.regressed


def test_a_flip_back_to_the_level_before_is_no_new_change() -> None:
    # A bimodal runner: the kernel moves to 70, then back to 60 within a few nights.
    base = noisy(noise=0.005)
    up = [70.0, 70.2, 69.9, 70.1]
    assert judge_latest([*base, *up[:2]]).improved
    back = judge_latest([*base, *up, 60.1, 59.9])
    # Back at the level before: judged against it, and the short stay at 70 is over.
    assert not back.regressed and not back.improved
    assert back.level == pytest.approx(60.0, rel=0.01)
    values = np.asarray([*base, *up, 60.1, 59.9])
    assert segment_starts_by_night(values, GateOptions())[-1] == values.size - 2
    # Once the new level has settled, the same move is a confirmed change.
    settled = [*base, *[70.0 + 0.1 * (i % 3) for i in range(SETTLED)], 60.1, 59.9]
    assert judge_latest(settled).regressed


def test_a_confirmed_change_is_remembered_when_later_nights_widen_the_old_segment() -> None:
    base = noisy(noise=0.005)
    risen = [*base, 72.0, 71.8, 72.1, 71.9, 72.2, 72.0, 71.9, 72.1, 72.0]
    starts = segment_starts_by_night(np.asarray(risen), GateOptions())
    assert starts[-1] == base.size  # the rise starts the segment, for good
    dropped = judge_latest([*risen, 64.0, 64.2])
    assert dropped.regressed and dropped.level == pytest.approx(72.0, rel=0.01)


def test_streaming_state_matches_each_night_judged_alone() -> None:
    values = np.concatenate([noisy(30, 0.01), noisy(20, 0.01, seed=4, level=50.0)])
    opts = GateOptions()
    starts = segment_starts_by_night(values, opts)
    for t in range(10, values.size + 1):
        assert segment_starts_by_night(values[:t], opts)[-1] == starts[t]


def test_the_night_noise_is_the_detectors() -> None:
    values = noisy(33)
    assert night_noise(values) == pytest.approx(_series_noise(values[None, :], 0.002)[0])


def test_bars_are_computed_for_fewer_points_never_more() -> None:
    assert [fewer_points(p) for p in (0, 7, 30, 31, 999)] == [0, 6, 30, 30, 400]


@pytest.mark.parametrize("series", [[50.0], [50.0, 51.0], [50.0, np.nan, 51.0]])
def test_a_kernel_with_almost_no_history_gets_no_verdict_not_a_crash(series) -> None:
    judged = judge_latest(series)
    assert not (judged.enough or judged.regressed or judged.suspect)


def test_sums_of_persistent_nights_spread_wider_than_independent_ones() -> None:
    rng = np.random.default_rng(1)
    stays = np.repeat(rng.choice([-1.0, 1.0], 20), 4)  # 80 nights, 4 at a time on one side
    persistent = 60 + 2.0 * stays + 0.6 * rng.standard_normal(80)
    independent = rng.permutation(persistent)  # the same values, in no order

    def spreads(values: np.ndarray) -> list[float]:
        level = level_of(values, 0, night_noise(values), 0.002)
        return [sum_spread(values, level, k) for k in (2, 3, 4)]

    assert all(s > 1.5 for s in spreads(persistent))  # its runs need more evidence
    two, *longer = spreads(independent)
    assert two == 1.0 and all(0.8 <= s < 1.0 for s in longer)  # a little less, never < 0.8
    short = persistent[:7]
    assert sum_spread(short, level_of(short, 0, night_noise(short), 0.002), 3) == 1.0


BURST_AND_BACK = [46.3, 46.0, 51.9, 36.1, 55.0, 54.6, 55.3, 55.5, 54.4, 54.7]


def test_the_nights_back_after_a_confirmed_burst_are_no_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A burst confirmed as a drop starts a segment of its slow nights; the run back to the
    old level is a return, not an improvement (``_back_to``), and ends that segment."""
    quiet = noisy(29, noise=0.005, seed=2, level=54.8)

    def improved() -> list[bool]:
        history = [*quiet, *BURST_AND_BACK]
        return [judge_latest(history[: 31 + i]).improved for i in range(len(BURST_AND_BACK) - 1)]

    assert judge_latest([*quiet, *BURST_AND_BACK[:2]]).regressed  # the burst passes for a drop
    assert not any(improved())
    monkeypatch.setattr(runs, "_back_to", lambda *_: None)  # no run goes back
    assert any(improved())  # so the test can fail


@pytest.mark.parametrize(
    "history",
    [
        [55.0] * 30,  # constant
        [55.0] * 12 + [40.0] * 6 + [55.0] * 8,  # constant, a stay elsewhere, and back
        [55.0, 40.0, 55.0, 40.0],  # too short for a level
        [55.0],
    ],
)
def test_constant_and_short_histories_are_judged_without_a_return_or_a_failure(
    history: list[float],
) -> None:
    judged = [judge_latest(history[: i + 1]) for i in range(len(history))]
    assert not judged[-1].regressed and not judged[-1].improved
