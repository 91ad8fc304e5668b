"""Kernels beyond a runner-wide move: named only when their own change clears the shared one."""

from __future__ import annotations

import numpy as np
import pytest

from rules.runnerwide import BEYOND_SHARED_EFFECT, RunnerShift, beyond_shared


def _shift(changes: dict[str, float]) -> RunnerShift:
    return RunnerShift(len(changes), len(changes), -1, float(np.median(list(changes.values()))))


def test_noise_around_the_shared_move_names_nobody() -> None:
    rng = np.random.default_rng(3)
    changes = {f"k{i}": -0.065 + 0.008 * rng.standard_normal() for i in range(30)}
    assert beyond_shared(_shift(changes), changes) == []


@pytest.mark.parametrize(("own", "named"), [(-0.25, True), (-0.10, False)])
def test_a_kernel_named_beyond_clears_both_bars(own: float, named: bool) -> None:
    """-25% after a -6.5% card is its own regression; -10% is within the effect's bar."""
    rng = np.random.default_rng(5)
    changes = {f"k{i}": -0.065 + 0.004 * rng.standard_normal() for i in range(29)}
    changes["odd"] = own
    beyond = beyond_shared(_shift(changes), changes)
    assert beyond == ([("odd", own)] if named else [])
    assert named == (abs(own - np.median(list(changes.values()))) >= BEYOND_SHARED_EFFECT)


def test_on_time_the_slower_side_is_beyond() -> None:
    """Judged on time a move is positive (slower); beyond it is slower still, worst first."""
    changes = {f"k{i}": 0.07 for i in range(10)} | {"a": 0.30, "b": 0.45, "fast": -0.2}
    shift = RunnerShift(13, 13, -1, float(np.median(list(changes.values()))))
    assert beyond_shared(shift, changes) == [("b", 0.45), ("a", 0.30)]
