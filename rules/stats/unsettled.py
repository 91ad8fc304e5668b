"""A PR's drop in a young segment: confirmed only when worse than the level before the change too.

The nightly gate confirms a run in a segment of fewer than ``SETTLED`` nights only when it is
also beyond the level before the change (``runs._run_confirms``): a runner that just rose may
flip back, and a young segment's level and noise come from a handful of nights. The PR gate
reads the base nights the same way (``at_the_change``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy.typing as npt

from rules.stats.constants import MIN_FIRST, MIN_LEVEL, SETTLED
from rules.stats.gate import Judgement
from rules.stats.levels import Level, clean, level_of
from rules.stats.options import GateOptions
from rules.stats.pr import GateMode, judge_measurement
from rules.stats.runs import night_noise


def level_before(history: npt.ArrayLike, start: int, opts: GateOptions) -> Level | None:
    """The level of the ``SETTLED`` nights before a segment starting at ``start`` (None: too few).

    As the nightly gate's (``runs._prior``): the detector's noise of the whole history.
    """
    nights = clean(history)
    before = level_of(
        nights[:start], max(0, start - SETTLED), night_noise(nights), opts.noise_floor
    )
    usable = before.n >= (MIN_LEVEL if before.start else MIN_FIRST) and before.level != 0
    return before if usable else None


def at_the_change(
    judged: Judgement,
    history: npt.ArrayLike,
    opts: GateOptions,
    *,
    mode: GateMode,
    higher_is_better: bool,
) -> Judgement:
    """``judged`` a suspect, not regressed, where its segment is young and the change explains it.

    A regression judged against a segment of fewer than ``SETTLED`` nights (after a change)
    stays one only when its measurements are worse, by the same test, than the level before
    the change. An unchanged PR measured at the low one of a young segment's alternating
    values (a runner that rose and flips back) was confirmed against five nights' median
    with one night's noise; the nightly gate warned on the same values.
    """
    if not judged.regressed or judged.segment_start == 0 or judged.n >= SETTLED:
        return judged
    before = level_before(history, judged.segment_start, opts)
    if before is None:
        return judged
    again = judge_measurement(
        before,
        judged.current,
        judged.remeasured,
        higher_is_better=higher_is_better,
        mode=mode,
        options=opts,
    )
    return judged if again.regressed else replace(judged, regressed=False, suspect=True)
