"""One value (or one run's samples) against a baseline: ``compare_to_baseline``.

The current value against the baseline's median, in units of the baseline's robust spread
(scaled MAD, with a floor relative to the centre). A change must be both *significant*
(``|z| >= z_threshold``) and *large enough to matter* (``|relative change| >= min_effect``).
Outliers in the baseline do not move the median nor inflate the MAD, so one odd night neither
hides a drop nor creates one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rules.stats.options import CompareOptions
from rules.stats.robust import FloatArray, fast_median, robust_center_spread


@dataclass(frozen=True)
class Comparison:
    """The result of ``compare_to_baseline``; every number needed to reproduce it.

    Attributes:
        regressed: Worse beyond noise and beyond the practical floor.
        improved: Better beyond noise and beyond the practical floor.
        relative_change: ``(current - center) / center`` (NaN without a baseline).
        current: The current value (median of the samples when samples were given).
        center: Median of the baseline.
        spread: Scaled MAD of the baseline (before the noise floor).
        noise: The spread used: ``max(spread, noise_floor * |center|)``.
        n: Number of baseline values.
        z: ``(current - center) / (noise * sqrt(1 + pi / (2 n)))``.
        enough: Whether the baseline had ``min_runs`` values.
        samples: Number of current samples (1 for a single value).
        method: Name of the test.
    """

    regressed: bool
    improved: bool
    relative_change: float
    current: float
    center: float
    spread: float
    noise: float
    n: int
    z: float
    enough: bool
    samples: int = 1
    method: str = "robust-z (median/MAD)"


def _current_value(current: float | Sequence[float] | npt.ArrayLike) -> tuple[float, int]:
    arr = np.atleast_1d(np.asarray(current, dtype=float))
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        return math.nan, 0
    # The median of one run's samples: a few slow launches (a clock dip) do not move it.
    return fast_median(arr), int(arr.size)


def _comparison(
    base: FloatArray, value: float, n_samples: int, opts: CompareOptions, higher_is_better: bool
) -> Comparison:
    """The comparison of ``value`` with the NaN-free ``base``."""
    center, spread = robust_center_spread(base)
    noise = max(spread, opts.noise_floor * abs(center)) if base.size else math.nan
    n = int(base.size)
    rel = (value - center) / center if n and center else math.nan
    if n < opts.min_runs or math.isnan(value) or center == 0:
        return Comparison(
            False, False, rel, value, center, spread, noise, n, math.nan, False, n_samples
        )
    scale = noise * math.sqrt(1 + math.pi / (2 * n))
    z = (value - center) / scale if scale > 0 else math.copysign(math.inf, value - center)
    significant = abs(z) >= opts.z_threshold and abs(rel) >= opts.min_effect
    worse = (rel < 0) if higher_is_better else (rel > 0)
    return Comparison(
        significant and worse,
        significant and not worse,
        rel,
        value,
        center,
        spread,
        noise,
        n,
        z,
        True,
        n_samples,
    )


def compare_to_baseline(
    baseline: npt.ArrayLike,
    current: float | Sequence[float] | npt.ArrayLike,
    *,
    higher_is_better: bool = True,
    options: CompareOptions | None = None,
) -> Comparison:
    """Whether ``current`` moved beyond the noise of ``baseline``.

    Args:
        baseline: One value per baseline run (NaNs ignored).
        current: One value, or the samples of one run (their median is used).
        higher_is_better: Percent of roof: True. Time: False.
        options: Thresholds (``CompareOptions`` defaults when None).

    Returns:
        A ``Comparison``; ``regressed`` and ``improved`` are both False when the baseline has
        fewer than ``min_runs`` values.
    """
    base = np.asarray(baseline, dtype=float).ravel()
    value, n_samples = _current_value(current)
    return _comparison(
        base[~np.isnan(base)], value, n_samples, options or CompareOptions(), higher_is_better
    )
