"""rules.stats.windows: the window scan's summaries, and scales wider than the series."""

from __future__ import annotations

import numpy as np
import pytest

from rules.stats import ChangePointOptions
from rules.stats.constants import TRIMMING
from rules.stats.windows import (
    _one_scale,
    _series_noise,
    _window_counts,
    _window_stats,
    scale_scans,
)


def gappy(rows: int, width: int, seed: int) -> np.ndarray:
    """Noisy rows with a step, missing nights and a few leading NaN (a shorter history)."""
    rng = np.random.default_rng(seed)
    values = 60 * (1 + 0.03 * rng.standard_normal((rows, width)))
    values[:, width // 2 :] *= 0.8
    values[rng.random(values.shape) < 0.15] = np.nan
    values[::3, : width // 3] = np.nan
    return values


@pytest.mark.parametrize("width", [4, 7, 8, 15, 31, 40, 63])
def test_a_scale_past_the_series_scans_bit_for_bit_as_one_point_past_it(width: int) -> None:
    opts = ChangePointOptions()
    values = gappy(30, width, seed=width)
    noise = _series_noise(values, opts.noise_floor)
    reference = _one_scale(values, noise, width + 1, opts)
    for w in (width + 2, 2 * width + 3, 64, 128):
        scan = _one_scale(values, noise, w, opts)
        for got, want in zip(scan, reference, strict=True):
            assert got.tobytes() == want.tobytes(), (width, w)


def test_scale_scans_gives_each_configured_scale_in_order() -> None:
    opts = ChangePointOptions()
    values = gappy(20, 30, seed=1)
    noise = _series_noise(values, opts.noise_floor)
    scans = list(scale_scans(values, noise, opts))
    assert [w for w, _ in scans] == list(opts.windows) == [8, 16, 32, 64]
    for w, scan in scans:
        own = _one_scale(values, noise, w, opts)
        assert all(a.tobytes() == b.tobytes() for a, b in zip(scan, own, strict=True))
    assert scans[2][1] is scans[3][1]  # 32 and 64 points: both past 30, scanned once


def test_trimmed_means_of_windows_missing_points_and_empty_ones() -> None:
    """Each window's centre is its own trimmed mean; an empty window's is NaN."""
    values = gappy(12, 25, seed=4)
    w = 16
    padded = np.pad(values, ((0, 0), (w, w)), constant_values=np.nan)
    views = np.lib.stride_tricks.sliding_window_view(padded, w, axis=1)[:, : 25 + w]
    count = _window_counts(padded, w, 25 + w)
    stats = _window_stats(views, 2, count)
    start, fraction, _ = TRIMMING[0]
    assert (count == 0).any() and ((count >= start) & (count < w)).any()
    for row, column in np.ndindex(count.shape):
        kept = np.sort(views[row, column][~np.isnan(views[row, column])])
        n = kept.size
        if n == 0:
            assert np.isnan(stats.center[row, column])
        elif n >= start:
            cut = int(np.floor(n * fraction))
            want = sum(kept[cut : n - cut].tolist()) / (n - 2 * cut)
            assert stats.center[row, column] == pytest.approx(want, rel=1e-12)
