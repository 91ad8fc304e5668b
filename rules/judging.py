"""Between a ``RuleContext`` and the gate (``rules.stats``): which values, which mode, how many.

The baseline rules (roof-drop, time-regression) say what the gate judges as ``GateBatch``es:
one metric of every kernel at once, with the rule's thresholds. ``judge_batch`` judges one:
a nightly run by ``judge_latest_replayed`` (one change-point scan for every kernel), a PR run
by the PR gate in the context's mode. The family sizes come from here too: the kernels
judged (nightly) and the kernels re-measured (PR confirmation), so the thresholds know how
many kernels the verdict judges. The engine judges every batch before any rule checks
(``rules.gated``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from collectors.schema import KernelRecord
from rules.context import RuleContext
from rules.levelstore import LevelCache, cached_levels
from rules.roofline import Placement
from rules.stats import (
    CompareOptions,
    GateOptions,
    Judgement,
    Level,
    OwnDips,
    at_its_modes,
    at_the_change,
    judge_latest_replayed,
    judge_measurements,
    median_of,
    own_dips,
    screens_worse,
)
from rules.stats.frozen import frozen_from
from rules.verdict import Finding, Severity

Samples = Callable[[KernelRecord, Placement], list[float]]


@dataclass(frozen=True)
class Measured:
    """One kernel's baseline and every measurement of the current commit.

    Attributes:
        history: Baseline values, oldest first.
        current: The run's value (median of its samples).
        reruns: The re-measurements' values (medians of their samples), in order.
    """

    history: npt.NDArray[np.float64]
    current: float
    reruns: tuple[float, ...] = ()

    @classmethod
    def one(cls, history: npt.NDArray[np.float64], current: float) -> Measured:
        """``Measured(history, current)``, without the per-field calls (most kernels of a PR)."""
        return frozen_from(cls, history=history, current=current, reruns=())

    @property
    def all(self) -> tuple[float, ...]:
        """Every measurement of the commit: the run's first, then the re-measurements."""
        return (self.current, *self.reruns)


def measured(
    ctx: RuleContext, key: str, history: npt.NDArray[np.float64], samples: Samples
) -> Measured:
    """``key``'s history and its measurements, each the median of ``samples`` of one run."""
    current = median_of(samples(ctx.kernels[key], ctx.placements[key]))
    reruns = []
    for run, placements in zip(ctx.reruns, ctx.rerun_placements, strict=True):
        if key in placements:
            kernel = next(k for k in run.kernels if k.key == key)
            reruns.append(median_of(samples(kernel, placements[key])))
    return Measured(history, current, tuple(reruns))


def gate_options(ctx: RuleContext, opts: CompareOptions, family: int) -> GateOptions:
    """The rule's thresholds, the configured protocol (``[rules.gate]``) and the family size."""
    compare = {name: getattr(opts, name) for name in CompareOptions.model_fields}
    return GateOptions(**compare, **ctx.config.gate.model_dump(), family_size=max(family, 1))


@dataclass(frozen=True)
class GateBatch:
    """Values the gate judges together (one family), with one rule's thresholds.

    Attributes:
        metric: The history column judged (``percent_of_roof``, ``time_s``, ``mfu``): the
            gate's decisions are filed under it (``rules.gated.GateDecisions``).
        values: Each kernel's (or group's) baseline and measurements, by key.
        options: The thresholds (the rule's options).
        higher_is_better: The metric's direction.
    """

    metric: str
    values: Mapping[str, Measured]
    options: CompareOptions
    higher_is_better: bool = True


def judge_batch(
    ctx: RuleContext, batch: GateBatch, levels: LevelCache | None
) -> dict[str, Judgement]:
    """The gate's judgement of every value of ``batch``, by key (one call of the gate).

    ``levels``: the base-branch levels at hand (``rules.levelstore``), read, and added to
    with those computed (a nightly run's: the ones the next PR asks for).
    """
    keys, items = list(batch.values), list(batch.values.values())
    if not items:
        return {}
    up = batch.higher_is_better
    fleet = gate_options(ctx, batch.options, len(keys))
    mode = ctx.gate_mode
    if mode is None:
        series = [np.append(m.history, m.current) for m in items]
        judged, replays = judge_latest_replayed(series, higher_is_better=up, options=fleet)
        if levels is not None and ctx.trusted:
            # What the next PR is judged against; tonight's replays spare judging their nights
            # again.
            cached_levels(levels, series, fleet, replays)
        return dict(zip(keys, judged, strict=True))
    known = cached_levels(levels, [m.history for m in items], fleet)
    confirm = gate_options(ctx, batch.options, _remeasured_suspects(known, items, up, fleet))
    dips = _own_dips(items, fleet) if mode == "single" else [None] * len(items)
    judged = judge_measurements(
        known,
        [m.current for m in items],
        [m.reruns for m in items],
        higher_is_better=up,
        mode=mode,
        options=confirm,
        own_dips=dips,
    )
    cleared = (
        at_its_modes(
            at_the_change(j, m.history, confirm, mode=mode, higher_is_better=up), m.history, confirm
        )
        for j, m in zip(judged, items, strict=True)
    )
    return dict(zip(keys, cleared, strict=True))


def _own_dips(items: Sequence[Measured], fleet: GateOptions) -> list[OwnDips | None]:
    """Each kernel's largest one-night deviation, for a PR checked without a re-measure step."""
    return list(own_dips([m.history for m in items], fleet))


def _remeasured_suspects(
    levels: Sequence[Level], items: Sequence[Measured], up: bool, opts: GateOptions
) -> int:
    """The confirmations the PR gate makes: Bonferroni is over these.

    The suspects re-measured; a kernel re-measured without being a suspect (as when a whole
    run is measured twice) is not tested on its re-measurement, so it does not count.
    """
    return sum(
        1
        for level, m in zip(levels, items, strict=True)
        if m.reruns and screens_worse(level, m.current, higher_is_better=up, options=opts)
    )


def gate_wording(j: Judgement, measurements: tuple[float, ...], fmt: Callable[[float], str]) -> str:
    """``"suspect"`` / ``"regressed"`` with the measurements, for a finding's message."""
    again = ", re-measured " + ", ".join(fmt(v) for v in measurements[1:])
    shown = again if len(measurements) > 1 else ""
    if j.regressed:
        how = "confirmed" if j.confirm_runs > 1 else "far beyond noise"
        return f"regressed ({how}{shown})"
    if shown:  # re-measured already: asking for a re-measure again reads as a step skipped
        return f"suspect, not confirmed by its re-measurement{shown}"
    return "suspect, not confirmed: re-measure to confirm"


def cleared(j: Judgement, *, higher_is_better: bool) -> bool:
    """A PR's first measurement worse beyond the screen that its re-measurements did not confirm.

    The gate's own decision (``run``: the screen's side was beyond noise); the verdict says so,
    so a kernel the comment's first measurement made look regressed is not silently unchanged.
    """
    worse = j.z < 0 if higher_is_better else j.z > 0
    return bool(j.remeasured) and j.run > 0 and worse and not (j.regressed or j.suspect)


#: ``Finding.numbers["outcome"]`` of a cleared suspect (``cleared``), so a reader of the verdict
#: can count them apart from the findings that ask for something.
CLEARED = "cleared"


def is_cleared(finding: Finding) -> bool:
    """A cleared suspect's information finding (``CLEARED``): the kernel stands unchanged."""
    return finding.severity == Severity.INFO and finding.numbers.get("outcome") == CLEARED


def cleared_wording(measurements: tuple[float, ...], fmt: Callable[[float], str]) -> str:
    """``on the first measurement; cleared: re-measured 69.1%, which does not confirm it``."""
    again = ", ".join(fmt(v) for v in measurements[1:])
    return f"on the first measurement; cleared: re-measured {again}, which does not confirm it"
