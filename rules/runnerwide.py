"""A move shared by many kernels of one run: the runner's, its driver's or its toolchain's.

The gate judges each kernel alone. When a third of a run's kernels are beyond noise on the
same side at once, the cause is rarely each kernel's code: a throttled or shared card, a
driver or a compiler moves them together. The verdict says so once, as information beside
the kernels' own findings (which stand as the gate decided: on the real runners such shared
moves mostly persist, so holding them back would delay real changes, and it removed no
failing false alarm; ``tests/bench/runner_wide.py``, "Runner-wide bursts on real runners" in
tests/bench/README.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from rules.stats import Judgement

#: A move is runner-wide when at least this share of the judged kernels is beyond noise on
#: one side. On the real runners' stable nights 3-11% of a runner's series are 3 noises off
#: on a given side (``runner_wide.py``): a third is far beyond that, and it is the share the
#: bench counts as shared.
RUNNER_SHARE = 0.34
#: ... and at least this many kernels moved: two of three kernels are no runner's signal.
RUNNER_MIN_KERNELS = 3
#: The ``measure`` of a runner-wide note over kernels judged on time (``time-regression``).
TIME_MEASURE = "time_s"
#: How the note on a run measured on a runner new to its baseline begins (the check writes
#: it: ``service.pipeline.runnernote``); the headline names that runner beside a shared move.
NEW_RUNNER_NOTE = "measured on runner "


def new_runner(notes: Sequence[str]) -> str | None:
    """The runner a verdict's notes name as new to its baseline, if one does."""
    for note in notes:
        if note.startswith(NEW_RUNNER_NOTE):
            return note.removeprefix(NEW_RUNNER_NOTE).partition(";")[0]
    return None


@dataclass(frozen=True)
class RunnerShift:
    """Kernels of one run beyond noise on the same side.

    Attributes:
        moved: Kernels beyond noise on ``side``.
        judged: Kernels the gate judged (with enough history).
        side: -1 below their levels, +1 above.
        median_change: Median relative change of the moved kernels.
    """

    moved: int
    judged: int
    side: int
    median_change: float

    @property
    def share(self) -> float:
        """``moved / judged``."""
        return self.moved / self.judged

    def numbers(self, measure: str | None = None) -> dict[str, float | str | None]:
        """The finding's figures: the message's, recomputable from the kernels' findings.

        ``measure``: what the kernels were judged on when it is not percent of roof
        (``TIME_MEASURE``: the median change is then of time, and worse is slower).
        """
        figures: dict[str, float | str | None] = {
            "kernels_moved": self.moved,
            "kernels_judged": self.judged,
            "share_moved": self.share,
            "median_relative_change": self.median_change,
        }
        return figures | ({"measure": measure} if measure else {})


def _beyond(j: Judgement, side: int) -> bool:
    """Beyond noise on ``side``: a suspect or a change below; a value as far above.

    A two-level kernel at its other mode is no suspect (``rules.stats.modes``): not counted.
    """
    if side < 0:
        return j.suspect or j.regressed
    return j.improved or (j.modes is None and j.z >= j.z_threshold)


def runner_shift(
    judgements: Iterable[Judgement],
    share: float = RUNNER_SHARE,
    min_kernels: int = RUNNER_MIN_KERNELS,
) -> RunnerShift | None:
    """The side a runner-wide share of the judged kernels moved to, if one did.

    Below first: when both sides reach the share (a run of very few kernels), the side that
    can fail the verdict is named.
    """
    judged = [j for j in judgements if j.enough and not math.isnan(j.z)]
    for side in (-1, 1):
        moved = [j.relative_change for j in judged if _beyond(j, side)]
        if len(moved) >= min_kernels and len(moved) >= share * len(judged):
            return RunnerShift(len(moved), len(judged), side, float(np.median(moved)))
    return None
