"""Small helpers the catalogue's rules share: current values, baseline columns, wording."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pandas as pd

from collectors.schema import KernelRecord
from rules.roofline import Placement
from rules.stats import CompareOptions, Comparison


def percent_samples(kernel: KernelRecord, placement: Placement) -> list[float]:
    """Percent of roof of each sample when the tool gave per-launch times, else the one value.

    A sample ``s_i`` is one launch (or one iteration), so its percent of roof is
    ``100 * (T_roof / launches) / s_i``.
    """
    pct = placement.percent_of_roof
    if pct is None:
        return []
    if not kernel.samples_s or placement.t_roof_s is None:
        return [pct]
    per_launch = placement.t_roof_s / max(kernel.launches, 1)
    return [100.0 * per_launch / s for s in kernel.samples_s if s > 0] or [pct]


def time_samples(kernel: KernelRecord) -> list[float]:
    """The kernel's time in the unit the history stores (total over launches) per sample."""
    if kernel.samples_s and kernel.launches <= 1:
        return list(kernel.samples_s)
    return [kernel.duration_s]


def column(rows: pd.DataFrame, name: str) -> npt.NDArray[np.float64]:
    """A numeric history column with NaNs dropped."""
    if rows.empty:
        return np.array([], dtype=float)
    values = pd.to_numeric(rows[name], errors="coerce").to_numpy(dtype=float)
    return np.asarray(values[~np.isnan(values)], dtype=float)


def comparison_numbers(cmp: Comparison, opts: CompareOptions) -> dict[str, float | str | None]:
    """The figures a comparison finding carries, so its verdict can be reproduced."""
    return {
        "current": cmp.current,
        "baseline_center": cmp.center,
        "baseline_spread": cmp.spread,
        "baseline_n": cmp.n,
        "noise_used": cmp.noise,
        "relative_change": cmp.relative_change,
        "z": cmp.z,
        "z_threshold": opts.z_threshold,
        "min_effect": opts.min_effect,
        "current_samples": cmp.samples,
        "method": cmp.method,
    }


#: Below this a figure reads 0.0 at one decimal: it gets two significant digits instead.
_READS_ZERO = 0.05


def one_decimal(value: float, sign: bool = False) -> str:
    """``71.4``, or ``0.043`` where one decimal would read ``0.0``.

    A launch-bound kernel at 0.19% of roof that moves by 0.04 points reads ``−0.043 pts``,
    not ``−0.0 pts``. With ``sign``, a positive value gets its ``+``.
    """
    plus = "+" if sign else ""
    if 1e-4 <= abs(value) < _READS_ZERO:
        return f"{value:{plus}.2g}"
    return f"{value:{plus}.1f}"


def speed(ratio: float, digits: int = 2) -> str:
    """A time ratio in words: ``0.61`` -> ``"1.64× faster"``, ``1.2`` -> ``"1.20× slower"``.

    A ratio that rounds to 1 is ``"the same speed, 1.00×"``: "1.00× slower" said of 1.0007.
    """
    if ratio <= 0:
        return "—"
    shown = f"{max(ratio, 1 / ratio):.{digits}f}"
    if float(shown) == 1:
        return f"the same speed, {shown}×"
    return f"{shown}× faster" if ratio <= 1 else f"{shown}× slower"


def signed_percent(fraction: float) -> str:
    """``-0.155`` -> ``"-15.5%"``."""
    if math.isnan(fraction):
        return "n/a"
    return f"{fraction * 100:+.1f}%"


def seconds(value: float) -> str:
    """A duration in the unit that reads best."""
    for unit, factor in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if value >= factor:
            return f"{value / factor:.3g} {unit}"
    return f"{value / 1e-9:.3g} ns"
