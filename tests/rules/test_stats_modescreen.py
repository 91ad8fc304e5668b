"""The batch replay's screen for runs judged against a mode (``rules.stats.modescreen``).

It must leave to ``step`` every row ``modelevel.past_modes`` reads as past both modes, and
spare the one-by-one read of the rows that are merely past a step of one level.
"""

from __future__ import annotations

import numpy as np
import pytest

from rules.stats import modescreen
from rules.stats.constants import MODE_CARRY_SEPARATION
from rules.stats.modelevel import fence, past_modes
from rules.stats.modes import two_modes
from rules.stats.options import GateOptions

NIGHTS = 45
STAYS = np.repeat(np.arange(12) % 2, 4)[: NIGHTS - 3]  # a sticky runner: 4 nights at each mode


def _two_level(rng: np.random.Generator) -> np.ndarray:
    upper = rng.uniform(1.05, 1.2)
    levels = np.where(np.roll(STAYS, int(rng.integers(0, 8))) == 1, upper, 1.0)
    values = 50 * levels * (1 + rng.uniform(0.002, 0.02) * rng.standard_normal(levels.size))
    run = 50 * rng.uniform(0.8, 0.95) * np.ones(3) * (1 + 0.005 * rng.standard_normal(3))
    return np.r_[values, run]


def _stepped(rng: np.random.Generator) -> np.ndarray:
    values = 50 * (1 + rng.uniform(0.002, 0.03) * rng.standard_normal(NIGHTS))
    values[-int(rng.integers(1, 4)) :] *= rng.choice([0.7, 0.85, 1.2])
    return values


def _rows(seed: int, maker: object) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([maker(rng) for _ in range(60)])  # type: ignore[operator]


def _one_by_one(history: np.ndarray, start: int, opts: GateOptions) -> list[bool]:
    """Whether ``past_modes`` reads some run at each row's end as past both modes."""
    width = history.shape[1]
    return [
        any(
            past_modes(row[start : width - k], row[width - k :], sign, opts.noise_floor) is not None
            for k in range(1, opts.pool_runs + 1)
            for sign in (-1, 1)
        )
        for row in history
    ]


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("start", [0, 9])
def test_the_rows_past_both_modes_are_those_read_one_by_one(seed: int, start: int) -> None:
    history = np.r_[_rows(seed, _two_level), _rows(seed, _stepped)]
    # Ties and a stray far off: the fence and the best split land on nights' values.
    history[::7] = np.round(history[::7], 0)
    history[3, start + 2] = 5.0
    opts = GateOptions()
    alive = np.ones(history.shape[0], dtype=bool)
    screened = modescreen.past_modes_rows(history, start, alive, opts)
    expected = _one_by_one(history, start, opts)
    assert screened.tolist() == expected
    assert sum(expected[:60]) >= 20 and not any(expected[60:])  # both kinds were seen


def test_a_step_of_one_level_is_ruled_out_before_the_one_by_one_read() -> None:
    stepped, moded = _rows(4, _stepped), _rows(4, _two_level)
    assert not _screened(stepped[:, :-3]).any()
    past = np.array(_one_by_one(moded, 0, GateOptions()))
    assert past.sum() >= 20
    assert _screened(moded[:, :-3])[past].all()


def _screened(segment: np.ndarray) -> np.ndarray:
    low, high = fence(np.sort(segment, axis=1))
    kept = (segment >= low[:, None]) & (segment <= high[:, None])
    return modescreen._may_be_two_level(segment, kept, _sizes(segment), GateOptions())


def _sizes(history: np.ndarray) -> np.ndarray:
    return np.asarray(np.max(np.abs(history), axis=1), dtype=float)


def _mixed(rng: np.random.Generator) -> np.ndarray:
    """Two levels 1-10% apart, 1-3 nights at a time or shuffled: modes near every bar."""
    stays = np.repeat(np.arange(40) % 2, int(rng.integers(1, 4)))[:40]
    if rng.random() < 0.3:
        rng.shuffle(stays)
    levels = np.where(stays == 1, 1 + rng.uniform(0.01, 0.1), 1.0)
    return 50 * levels * (1 + rng.uniform(0.002, 0.02) * rng.standard_normal(40))


def test_the_two_level_screen_passes_every_segment_two_modes_reads_far_apart() -> None:
    rng = np.random.default_rng(5)
    rows = np.array([_mixed(rng) for _ in range(3000)])
    floor = GateOptions().noise_floor
    found = [two_modes(row, floor) for row in rows]
    apart = np.array(
        [m is not None and m.high - m.low >= MODE_CARRY_SEPARATION * m.spread for m in found]
    )
    screened = modescreen._modes_apart(rows, _sizes(rows), floor)
    # Hundreds on each side, many near the bars (1% more separation loses some).
    assert 500 <= apart.sum() <= 2500
    assert screened[apart].all()
    assert screened.sum() < 0.6 * rows.shape[0]
