"""Two-level kernels judged in their within-mode noise (``rules.stats.modelevel``).

A window that alternates between two levels has a noise that holds the switching: a drop past
both modes is a few of those noises off the window's level, and many within-mode spreads off
the mode it left.
"""

from __future__ import annotations

import numpy as np

from rules.stats import judge_latest, modelevel, modes
from rules.stats.levels import level_of
from rules.stats.options import GateOptions

#: Stays of a sticky two-state runner: 0 at 71% of roof, 1 at 62% (40 nights; the segment the
#: gate judges in holds the last 22).
STAYS = [1, 1, 0, 0, 0, 1, 1, 1, 0, 0] * 4


def two_level(seed: int = 3, noise: float = 0.01) -> np.ndarray:
    rng = np.random.default_rng(seed)
    levels = np.where(np.array(STAYS) == 1, 62.0, 71.0)
    return np.asarray(levels * (1 + noise * rng.standard_normal(levels.size)), dtype=float)


def test_a_drop_past_both_modes_the_windows_noise_hid_is_found() -> None:
    history = two_level()
    window = level_of(history, 0, 0.0, GateOptions().noise_floor)
    drop = np.append(history, [57.5, 57.8])  # 7% below the low mode
    # The window's noise (4.6, the switching) puts the drop within the nightly bar (the gate
    # judged it at z -2.1 and -1.8 before) ...
    assert abs(window.z(57.5)) < GateOptions().nightly_floor
    first, second = judge_latest(drop[:-1]), judge_latest(drop)
    # ... the low mode's within-mode noise (0.7) 6 of them below it.
    assert first.suspect and first.level < 62.5 and first.noise < 1.0 and first.z < -6.0
    assert second.regressed


def test_a_night_at_a_mode_is_still_no_suspect() -> None:
    history = two_level()
    for nights in ([62.3], [61.5, 62.4, 62.0], [71.5, 70.2], [61.0, 60.6]):
        grown = np.append(history, nights)
        for end in range(history.size + 1, grown.size + 1):
            judged = judge_latest(grown[:end])
            assert not judged.suspect and not judged.regressed, (nights, end)


def test_a_run_is_judged_against_a_mode_only_where_no_night_of_the_segment_was() -> None:
    """A kernel whose nights scatter past its "modes" before is no two-level runner: a run
    there is judged against the segment's level, as before."""
    history = two_level()
    floor = GateOptions().noise_floor
    level = level_of(history, 0, 0.0, floor)
    run = np.array([57.5])
    assert modelevel.mode_level(history, run, -1, level, floor) is not None
    scattered = history.copy()
    scattered[33] = 58.5  # one night past the low mode before
    assert modelevel.mode_level(scattered, run, -1, level, floor) is None
    assert modelevel.mode_level(history, np.array([61.8]), -1, level, floor) is None  # at a mode


def test_a_far_stray_does_not_take_the_split() -> None:
    """Nights at half the level would take the best split to themselves (no two modes): the
    modes are read from the nights within the fence."""
    history = two_level()
    history[[12, 30]] = [31.0, 32.0]
    floor = GateOptions().noise_floor
    assert modes.two_modes(history, floor) is None
    level = level_of(history, 0, 0.0, floor)
    judged = modelevel.mode_level(history, np.array([57.5]), -1, level, floor)
    assert judged is not None and abs(judged[0].level - 62.0) < 0.5
