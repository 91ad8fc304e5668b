"""The load driver's runs: the load test's, and ``steady`` ones as a GPU runner measures them."""

from __future__ import annotations

import numpy as np
from load_driver import big_run

#: The H100 SXM's HBM3 bandwidth (the device the driver's runs name), bytes a second.
H100_HBM = 3.35e12


def _bandwidth(steady: bool, night: int) -> tuple[np.ndarray, np.ndarray]:
    run = big_run("acme/kernels", night, 300, steady=steady)
    times = np.array([k.duration_s for k in run.kernels])
    moved = np.array([k.bytes["dram"] for k in run.kernels])
    return times, moved / times


def test_steady_kernels_keep_their_times_under_the_roof() -> None:
    (first, rate), (second, _) = _bandwidth(True, 1), _bandwidth(True, 2)
    change = second / first - 1
    assert np.median(np.abs(change)) < 0.03 and np.max(np.abs(change)) < 0.5
    assert rate.max() < H100_HBM and rate.min() > 0.05 * H100_HBM


def test_the_load_tests_kernels_are_drawn_anew_each_night() -> None:
    (first, rate), (second, _) = _bandwidth(False, 1), _bandwidth(False, 2)
    assert np.median(np.abs(second / first - 1)) > 0.1
    assert (rate > H100_HBM).mean() > 0.5  # most above the roof, as the docstring says
