"""A kernel young on a new card, judged by the gate on its nights there.

A kernel with fewer than ``OWN_RUNS_SETTLED`` runs on its card is judged against another
card's level (``device_scaling``), with a 15% tolerance for what cards differ in: at most a
warning, "did not keep up". A kernel that kept up on its first nights on the new card and then
fell 20% was only that warning, and once the card's own history settled, the fall was its
level: no night failed. Its own few nights alone cannot judge it either: a noise estimated
from five nights sets the threshold near 16 noise units over 300 kernels.

So the gate judges its nights on the new card after the other card's segment, scaled to them:
each of its nights reads as percent of the baseline's roof (the level times the time the
roofs predict, over its time: ``rules.crossdevice.Scaling.percent``), and the other card's
segment is scaled by the median of its first nights there (up to ``CALIBRATING_NIGHTS``) over
its level. From its second night: waiting for four, a kernel that fell on its second or third
night was never failed (the median of four was the fallen level) and its fall was put down to
the card, as was a PR's right after the swap. A night beyond noise of the nights before it ends
the nights that scale it (``calibrating_nights``): after a confirmed fall the new level is the
level, as on a settled card.
The segment gives the gate its noise and its length; the card's own nights give the level.
The gate keeps the segment until ``GATE_RUNS_SETTLED`` nights, past device-scaling's six: on
six nights alone it confirmed again a fall it had confirmed on the third. A kernel that did
not keep up from its first night is device-scaling's: the scaling hides that offset from the
gate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from rules.crossdevice import DeviceLevel, Scaling, known_points
from rules.judging import Measured
from rules.stats import GateOptions, Judgement, conservative_median, nightly_z

#: The most nights on the new card that scale the other card's segment to it: the median of its
#: first ones, so the nights after them are judged. Fewer while the card has fewer: a
#: 300-kernel swap warned on 2.3 kernels that kept up a night on its 2nd to 4th nights (1.5 on
#: later ones) and failed none (``tests/bench/bench_new_card_nights.py``).
CALIBRATING_NIGHTS = 4


def new_card_measured(
    scaled: Scaling,
    own_times: npt.NDArray[np.float64],
    measurements: Sequence[float],
    opts: GateOptions,
) -> Measured | None:
    """The gate's history and measurements of a kernel young on its card, as percent of roof.

    ``own_times``: its base-branch times on this card, oldest first (NaN: not measured);
    ``measurements``: its times in the run, then in each re-measurement; ``opts``: the gate's
    (``calibrating_nights``). None before its first night here: device-scaling judges that
    one alone.
    """
    known = own_nights(own_times)
    if not known.size or not all(t > 0 for t in measurements):
        return None
    level = scaled.baseline
    predicted = level.time_s * scaled.expected_time_ratio
    own = level.percent * predicted / known
    first = own[: calibrating_nights(level, own, opts)]  # later nights are judged
    segment = np.asarray(level.segment, dtype=float)
    segment = segment[np.isfinite(segment)] * (float(np.median(first)) / level.percent)
    now = [level.percent * predicted / t for t in measurements]
    return Measured(np.concatenate([segment, own]), now[0], tuple(now[1:]))


def calibrating_nights(level: DeviceLevel, own: npt.NDArray[np.floating], opts: GateOptions) -> int:
    """How many of the first nights here (``own``, percent of the baseline's roof) scale it.

    Up to ``CALIBRATING_NIGHTS``, ending before the first night beyond noise of the median of
    those before it: read on the other card's level (``level``), scaled by that median, at the
    gate's nightly bar and ``min_effect``. Else a fall on the third night entered the median of
    four, the segment sat between the two levels, the nights that kept up read as a rise from
    it, and a fall the gate had confirmed failed again the next night.
    """
    for night in range(1, min(own.size, CALIBRATING_NIGHTS)):
        scale = level.percent / float(np.median(own[:night]))
        value = float(own[night]) * scale
        bar = nightly_z(opts, level.n + night, level.se)
        effect = abs(value / level.percent - 1)
        if abs(level.z(value)) >= bar and effect >= opts.min_effect:
            return night
    return CALIBRATING_NIGHTS


def on_first_nights(scaled: Scaling, own_times: npt.NDArray[np.float64]) -> Scaling | None:
    """``scaled`` read on the kernel's first nights on its card, not tonight (None: none yet).

    The least bad median of up to ``CALIBRATING_NIGHTS`` of them, as the weekly digest reads a
    device change: whether the card carried the kernel at its level. One that kept up there
    and fell since fell on this card (a change of code, roof-drop's gate), not with it.
    """
    known = own_nights(own_times)[:CALIBRATING_NIGHTS]
    if not known.size:
        return None
    level = scaled.baseline
    time_s = conservative_median([float(t) for t in known], higher_is_better=False)
    ratio = time_s / level.time_s
    percent = scaled.prediction.percent_now(level.percent, ratio)
    return replace(scaled, time_s=time_s, time_ratio=ratio, percent=percent)


def own_nights(own_times: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The times of the nights measured on the card (NaN and 0 s: not measured)."""
    known: npt.NDArray[np.float64] = own_times[np.isfinite(own_times) & (own_times > 0)]
    return known


def calibration_words(scaled: Scaling, judged: Judgement) -> str:
    """``over 34 runs, 30 on A100-SXM4-80GB scaled to H100-SXM5 and its 4 nights there``.

    The runs of the gate's segment (``judged``) of what ``new_card_measured`` gave it: the
    other card's segment, then the nights here. Counted as the other card's ``n`` and all the
    nights here, it disagreed with ``baseline_n``, and read as the other card's level.
    """
    theirs = scaled_runs(scaled, judged)
    ours = judged.n - theirs
    if not theirs:  # a change confirmed here: its level is of its nights here alone
        return f"over {judged.n} runs"
    where = f"over {judged.n} runs, {theirs} on {scaled.baseline.device} scaled to {scaled.device}"
    if not ours:
        return where
    return f"{where} and its {ours} night{'s' if ours > 1 else ''} there"


def scaled_runs(scaled: Scaling, judged: Judgement) -> int:
    """Of the gate's segment (``judged``), the other card's runs: its segment's come first."""
    theirs_n = known_points(scaled.baseline.segment)
    start, end = judged.segment_start, judged.segment_start + judged.n
    return max(0, min(theirs_n, end) - start)
