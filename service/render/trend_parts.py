"""A trend chart's shading of a two-level kernel's modes.

A kernel on a runner with two clock or memory states alternates between two levels
(``rules.two_modes``); the chart shades each mode's band (its level ± ``MODE_BAND`` within-mode
spreads), so a reader sees a night at the other mode as the runner's, not a drop.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from matplotlib.axes import Axes

from rules.stats import Modes, two_modes, visited_once

#: Half-height of a mode's band, in within-mode spreads (two: most of the mode's nights).
MODE_BAND = 2.0


def alternating_modes(values: npt.ArrayLike) -> Modes | None:
    """The modes of ``values`` (oldest first) to shade, when the kernel alternates.

    Not when it visited a level once only (``rules.stats.visited_once``): one visit to
    another level and back is a regression and its fix, not a runner that alternates.
    """
    modes = two_modes(np.asarray(values, dtype=float))
    return modes if modes is not None and not visited_once(modes) else None


def draw_modes(ax: Axes, modes: Modes, scale: float) -> None:
    """Shade each mode's band (values divided by ``scale``, the unit drawn)."""
    half = MODE_BAND * modes.spread
    for name, level in (("low", modes.low), ("high", modes.high)):
        low, high = (level - half) / scale, (level + half) / scale
        band = ax.axhspan(low, high, color="#9467bd", alpha=0.12)
        band.set_gid(f"mode-{name}")
