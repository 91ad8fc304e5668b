"""Bursts: a run of nights far off the level whose nights do not agree is no level yet.

A noisy neighbour or a throttled card slows a kernel for two to four nights, then it is
back. Two or three such nights in a row pass for a change of level, but each of them is slowed
by its own amount (5% one night, 25% the next), while a real change moves every night by the
same amount and leaves them within noise of each other. So a run confirms a change only when
its nights agree: their range is at most ``RUN_AGREE_Z`` noises of a difference of two nights
(``agrees``). The nights after a burst return; a real change, once its nights agree, confirms.
"""

from __future__ import annotations

import math

import numpy as np

from rules.stats.constants import RUN_AGREE_Z
from rules.stats.robust import FloatArray


def agrees(run: FloatArray, noise: float) -> bool:
    """Whether the nights of ``run`` are within ``RUN_AGREE_Z`` noises of a difference apart."""
    if run.size < 2 or not noise > 0:
        return True
    return float(np.ptp(run)) <= RUN_AGREE_Z * math.sqrt(2) * noise
