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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from collectors.schema import KernelRecord
from rules.measures import signed_percent
from rules.stats import Judgement, robust_center_spread

#: A move is runner-wide when at least this share of the judged kernels is beyond noise on
#: one side. On the real runners' stable nights 3-11% of a runner's series are 3 noises off
#: on a given side (``runner_wide.py``): a third is far beyond that, and it is the share the
#: bench counts as shared.
RUNNER_SHARE = 0.34
#: ... and at least this many kernels moved: two of three kernels are no runner's signal.
RUNNER_MIN_KERNELS = 3
#: A kernel moved beyond the shared move when its relative change is past the moved kernels'
#: median by this many of their robust spreads, on the move's side ...
BEYOND_SHARED_Z = 5.0
#: ... and by at least this much relative change: after a 7% slower card, a kernel 25% slower
#: has its own regression on top, which a reader of "30 of 30 below" would put on the card.
BEYOND_SHARED_EFFECT = 0.05
#: Kernels named beyond the shared move in the runner-wide note (worst first).
BEYOND_NAMED = 3
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

    def numbers(
        self, measure: str | None = None, beyond: Sequence[tuple[str, float]] = ()
    ) -> dict[str, float | str | None]:
        """The finding's figures: the message's, recomputable from the kernels' findings.

        ``measure``: what the kernels were judged on when it is not percent of roof
        (``TIME_MEASURE``: the median change is then of time, and worse is slower).
        ``beyond``: ``beyond_shared``'s kernels, the worst named.
        """
        figures: dict[str, float | str | None] = {
            "kernels_moved": self.moved,
            "kernels_judged": self.judged,
            "share_moved": self.share,
            "median_relative_change": self.median_change,
        }
        if beyond:
            figures |= {
                "kernels_beyond": len(beyond),
                "worst_beyond_kernel": beyond[0][0],
                "worst_beyond_change": beyond[0][1],
            }
        return figures | ({"measure": measure} if measure else {})


def _moved_changes(decisions: Mapping[str, Any], shift: RunnerShift) -> dict[str, float]:
    """The relative change of each kernel that moved with ``shift`` (``GateDecisions.of``)."""
    return {
        key: d.judgement.relative_change
        for key, d in decisions.items()
        if _judged(d.judgement) and _beyond(d.judgement, shift.side)
    }


def beyond_shared(shift: RunnerShift, changes: Mapping[str, float]) -> list[tuple[str, float]]:
    """The kernels (key, relative change) that moved beyond the shared move, worst first.

    ``changes``: the moved kernels' relative changes. Past their median on the move's side by
    ``BEYOND_SHARED_Z`` of their robust spreads and by ``BEYOND_SHARED_EFFECT``: a kernel's own
    change on top of the runner's.
    """
    _, spread = robust_center_spread(list(changes.values()))
    sign = 1.0 if shift.median_change > 0 else -1.0
    bar = max(BEYOND_SHARED_Z * (spread if math.isfinite(spread) else 0.0), BEYOND_SHARED_EFFECT)
    past = {k: c for k, c in changes.items() if sign * (c - shift.median_change) >= bar}
    return sorted(past.items(), key=lambda item: -sign * item[1])


def _beyond_words(beyond: Sequence[tuple[str, float]], kernels: Mapping[str, KernelRecord]) -> str:
    """``; beyond that move: copy_5 (-25.2%), ...`` (empty when none)."""
    if not beyond:
        return ""
    named = ", ".join(f"{kernels[k].name} ({signed_percent(c)})" for k, c in beyond[:BEYOND_NAMED])
    more = f" and {len(beyond) - BEYOND_NAMED} more" if len(beyond) > BEYOND_NAMED else ""
    return f"; beyond that move: {named}{more}"


@dataclass(frozen=True)
class RunnerNote:
    """The run-wide note of a rule: its message and its figures."""

    message: str
    numbers: dict[str, float | str | None]


def runner_wide_note(
    decisions: Mapping[str, Any],
    kernels: Mapping[str, KernelRecord],
    share: float = RUNNER_SHARE,
    min_kernels: int = RUNNER_MIN_KERNELS,
    measure: str | None = None,
) -> RunnerNote | None:
    """The note when many of a rule's judged kernels moved together (``GateDecisions.of``).

    Named beside it: the kernels that moved beyond the shared move. ``measure``
    ``TIME_MEASURE``: judged on time, where only the slower side is read. Only the run's
    ``kernels`` count: a group's decision (``group:<name>``) is a sum of kernels already
    counted, and counted too it made "1,100 of 1,100 kernels" of 1,000 kernels in 100 groups.
    """
    decisions = {key: d for key, d in decisions.items() if key in kernels}
    shift = runner_shift((d.judgement for d in decisions.values()), share, min_kernels)
    if shift is None or (measure == TIME_MEASURE and shift.side > 0):
        return None
    beyond = beyond_shared(shift, _moved_changes(decisions, shift))
    message = _note_words(shift, measure) + _beyond_words(beyond, kernels)
    return RunnerNote(message, shift.numbers(measure, beyond))


def _note_words(shift: RunnerShift, measure: str | None) -> str:
    if measure == TIME_MEASURE:
        who, where, unit = "kernels judged on time are", "slower than", " time"
    else:
        who, where, unit = "judged kernels are", "below" if shift.side < 0 else "above", ""
    return (
        f"runner-wide: {shift.moved} of {shift.judged} {who} {where} their levels beyond noise "
        f"in this run (median {signed_percent(shift.median_change)}{unit}); a move this wide is "
        "usually the card, its driver or the toolchain, not each kernel's code"
    )


def shared_by(
    moved: int, judged: int, share: float = RUNNER_SHARE, min_kernels: int = RUNNER_MIN_KERNELS
) -> bool:
    """Whether ``moved`` of ``judged`` kernels moving one way is a runner-wide share."""
    return moved >= min_kernels and moved >= share * judged


def _judged(j: Judgement) -> bool:
    """Judged against a level: enough history and a z (the kernels a share is of)."""
    return j.enough and not math.isnan(j.z)


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
    judged = [j for j in judgements if _judged(j)]
    for side in (-1, 1):
        moved = [j.relative_change for j in judged if _beyond(j, side)]
        if shared_by(len(moved), len(judged), share, min_kernels):
            return RunnerShift(len(moved), len(judged), side, float(np.median(moved)))
    return None
