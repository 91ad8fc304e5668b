"""Which kernels a per-value comparison could flag, for every kernel at once.

A rule that compares each kernel's value with its baseline (``compare_to_baseline``) finds
nothing for almost every kernel of a stable run, yet paid a dozen numpy calls for each. Here
the same test runs over blocks of equally long baselines (one sort for the medians, one for
the MADs), with a small margin on both bars: what it clears cannot be flagged, and the
rule runs the exact comparison on the few it keeps, so its findings are exactly as before.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from rules.stats import MAD_SCALE, CompareOptions

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
#: Relative slack on the z and effect bars: far above float rounding, far below any real step.
MARGIN = 1e-6


def _medians(ordered: FloatArray) -> FloatArray:
    n = ordered.shape[1]
    middle: FloatArray = ordered[:, (n - 1) // 2] / 2 + ordered[:, n // 2] / 2
    return middle


def _block_may_change(values: FloatArray, current: FloatArray, opts: CompareOptions) -> BoolArray:
    """Rows of ``values`` (finite baselines of one length) whose ``current`` could be flagged."""
    n = values.shape[1]
    with np.errstate(all="ignore"):  # a row with a stored outlier is kept (``may_change``)
        centre = _medians(np.sort(values, axis=1))
        spread = MAD_SCALE * _medians(np.sort(np.abs(values - centre[:, None]), axis=1))
        noise = np.maximum(spread, opts.noise_floor * np.abs(centre))
        scale = noise * math.sqrt(1 + math.pi / (2 * n))
        z = np.abs(current - centre) / scale
        rel = np.abs((current - centre) / centre)
    keep = ~((z < opts.z_threshold * (1 - MARGIN)) | (rel < opts.min_effect * (1 - MARGIN)))
    flagged: BoolArray = keep | ~(scale > 0) | (centre == 0)
    return flagged


def may_change(
    baselines: Sequence[FloatArray], current: Sequence[float], opts: CompareOptions
) -> list[bool]:
    """Whether ``compare_to_baseline(baselines[i], current[i])`` could be regressed or improved.

    ``baselines``: NaN-free. True for every kernel the block test cannot clear (an infinite
    value); False for one the comparison never flags (fewer than ``min_runs`` values, a NaN
    current value).
    """
    flags = [False] * len(baselines)
    by_length: dict[int, list[int]] = {}
    for i, base in enumerate(baselines):
        if not base.size or base.size < opts.min_runs or math.isnan(current[i]):
            continue  # never flagged
        if math.isinf(current[i]):
            flags[i] = True
        else:
            by_length.setdefault(base.size, []).append(i)
    for rows in by_length.values():
        values = np.stack([baselines[i] for i in rows])
        finite = np.all(np.isfinite(values), axis=1)
        now = np.asarray([current[i] for i in rows], dtype=float)
        flagged = _block_may_change(values, now, opts) | ~finite
        for i, flag in zip(rows, flagged, strict=True):
            flags[i] = bool(flag)
    return flags
