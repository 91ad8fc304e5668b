"""``roof-drop``: percent of roof fell versus the baseline's current level, confirmed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import cast

import numpy as np
from pydantic import Field

from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.figures import GateFigures
from rules.gated import GateDecisions
from rules.groups import GROUP_TIME, GroupFigures
from rules.judging import (
    CLEARED,
    GateBatch,
    Measured,
    Samples,
    cleared,
    cleared_wording,
    gate_options,
    gate_wording,
    measured,
)
from rules.measures import column, one_decimal, percent_samples, seconds, signed_percent
from rules.newcard import calibration_words, new_card_measured
from rules.roofline import MEMORY_BOUND
from rules.runnerwide import RUNNER_MIN_KERNELS, RUNNER_SHARE, runner_wide_note
from rules.stats import (
    GATE_Z,
    CompareOptions,
    GateOptions,
    Judgement,
    Modes,
    median_of,
    mode_words,
    visit_words,
    visited_once,
)
from rules.timing import judged_binding
from rules.verdict import Finding, KernelStatus, Severity, Stability


def _pct(value: float) -> str:
    return f"{value:.1f}%"


def _like_for_like(ctx: RuleContext, key: str) -> Samples:
    """Percent-of-roof samples against the roof the baseline was bound by (issue 13).

    The run's and each re-measurement's: the same kernel and work, so the same rescaling.
    """
    now_placed = ctx.placements[key]
    now = now_placed.percent_of_roof
    other = ctx.like_for_like[key]
    factor = other / now if now and other is not None else 1.0
    return lambda kernel, placement: [s * factor for s in percent_samples(kernel, placement)]


def _percent(ctx: RuleContext, key: str) -> Measured:
    """``key``'s gate baseline of percent of roof and its measurements, like for like."""
    history = ctx.gate_kernel_history(key).percent_of_roof
    if ctx.reruns or ctx.kernels[key].samples_s:
        return measured(ctx, key, history, _like_for_like(ctx, key))
    # One value, the run's (most kernels of a PR): what ``measured`` makes of it.
    now, other = ctx.placements[key].percent_of_roof, ctx.like_for_like[key]
    factor = other / now if now and other is not None else 1.0
    return Measured.one(history, median_of([cast(float, now) * factor]))


def _young_on_card(ctx: RuleContext, opts: GateOptions) -> dict[str, Measured]:
    """The kernels judged across cards with enough nights on their own (``rules.newcard``).

    Up to ``GATE_RUNS_SETTLED`` nights there (``RuleContext.gate_scaling``), past the
    ``OWN_RUNS_SETTLED`` at which device-scaling no longer compares the cards; ``opts``: the
    gate's, which read their first nights there (``rules.newcard.calibrating_nights``).
    """
    found = {}
    for key, scaled in ctx.gate_scaling.items():
        own = ctx.gate_kernel_history(key).time_s
        m = new_card_measured(scaled, own, ctx.measured_times[key], opts)
        if m is not None:
            found[key] = m
    return found


def _against_level(ctx: RuleContext, key: str, j: Judgement) -> str:
    """``gemv: 59.1% of roof (dram), level 69.9% ± 0.5 over 10 runs (−15.5%)``.

    A kernel young on its card names where its level comes from (``rules.newcard``).
    """
    binding = judged_binding(ctx.placements[key], ctx.kernel_history(key))
    scaled = ctx.gate_scaling.get(key)
    where = f"over {j.n} runs"
    if scaled is not None:
        where = calibration_words(scaled, j)
        binding = scaled.binding
    return (
        f"{ctx.kernels[key].name}: {one_decimal(j.current)}% of roof ({binding}), "
        f"level {one_decimal(j.level)}% ± {one_decimal(j.noise)} {where} "
        f"({signed_percent(j.relative_change)})"
    )


def _scaled(scale: float, unit: str) -> Callable[[float], str]:
    return lambda v: f"{v * scale:.3g}{unit}"


class RoofDrop(Rule):
    """Percent of roof fell versus the baseline's current level beyond noise, confirmed.

    **Anti-pattern**

    | kernel | device | roof | baseline % of roof (n=14) | current | re-measured |
    |---|---|---|---|---|---|
    | `decode_gemv<half>` | H100-SXM5 | dram (datasheet) | 85.1 ± 0.6 | 71.9 | 72.3 |

    The value (the median of the run's samples, when the tool gave them) lies more than
    ``z_threshold`` noise units (at least ``noise_floor`` of the level) below the level since
    the last confirmed change, and at least ``min_effect`` below it (measured against the
    roof the baseline was bound by, so a changed binding cannot hide it): the kernel is *suspect*
    (a warning). It *regressed* (a failure) when the change is confirmed: on a nightly run,
    by ``confirm_runs`` nights in a row; on a PR, by a re-measurement of the same commit
    that is beyond noise on its own (``check --rerun``); without a re-measure step, only a
    change far beyond noise fails at once (``[rules.gate]``). A suspect the re-measurements
    do not confirm is *cleared*: an information finding gives both figures. A kernel bound
    by another resource than its baseline's and faster than it (a fusion restored) is not
    judged here: two roofs compare nothing, and regime-flip reports the change. Thresholds
    grow with the number of kernels judged. Kernel groups are held to the same test on their
    time-weighted percent of roof and their MFU, or a memory-bound group on its total time
    (finding on ``group:<name>``). When ``runner_share`` of the judged kernels (at least
    ``runner_min_kernels``) are beyond noise on one side, one run-wide note says so: a move
    that wide is the runner's, its driver's or the toolchain's more often than each kernel's.

    **Best practice**

    Hold percent of roof within the baseline's noise band. Memory-bound and far below the
    roof: check access patterns, layout and vectorised loads. At the memory roof: cut bytes
    (fusion, quantisation). Compute-bound far below: tensor cores, tiling, ILP.
    """

    id = "roof-drop"
    group = "roofline"
    default_severity = Severity.FAIL
    stability = Stability.STABLE
    compares_to_baseline = True
    statuses = frozenset({KernelStatus.REGRESSED, KernelStatus.SUSPECT})

    class Options(RuleOptions, CompareOptions):
        """Thresholds (see ``rules.stats.GateOptions``); the protocol is ``[rules.gate]``."""

        z_threshold: float = Field(default=GATE_Z, gt=0)
        check_groups: bool = True
        runner_share: float = Field(default=RUNNER_SHARE, gt=0, le=1)
        runner_min_kernels: int = Field(default=RUNNER_MIN_KERNELS, ge=1)

    def gate_batches(self, ctx: RuleContext, opts: Options) -> Iterator[GateBatch]:
        """Every placed kernel's percent of roof (one batch); each group's percent, MFU or time.

        Kernels young on their card (``device_scaling``) with a few nights there too: their
        nights after the other card's segment, scaled to them (``rules.newcard``).
        """
        values = {
            key: _percent(ctx, key)
            for key, placement in ctx.placements.items()
            if placement.percent_of_roof is not None
            and key not in ctx.device_scaling
            and key not in ctx.faster_off_binding
            and key not in ctx.partly_counted  # time judges them
        }
        family = len(values) + len(ctx.gate_scaling)  # the nights' batch, as judged then
        values |= _young_on_card(ctx, gate_options(ctx, opts, family))
        yield GateBatch("percent_of_roof", values, opts)
        if not opts.check_groups:
            return
        for figures in ctx.groups.values():
            for measure in _measures(ctx, figures):
                if measure.current is None or figures.judged_history.empty:
                    continue
                history = column(figures.judged_history, measure.column)
                m = Measured(history, float(measure.current))
                up = measure.higher_is_better  # a group is its own family
                yield GateBatch(measure.metric, {figures.key: m}, opts, higher_is_better=up)

    def check(self, ctx: RuleContext, opts: Options, gate: GateDecisions) -> Iterator[Finding]:
        """A finding per kernel and per group whose percent of roof (or MFU) dropped."""
        judged = gate.of("percent_of_roof")
        for key in ctx.placements:
            decision = judged.get(key)
            if decision and (decision.judgement.regressed or decision.judgement.suspect):
                yield self._kernel(ctx, key, decision.judgement, decision.measured)
            elif decision and decision.judgement.modes is not None:
                yield self._two_level(ctx, key, decision.judgement, decision.judgement.modes)
            elif decision and cleared(decision.judgement, higher_is_better=True):
                yield self._cleared(ctx, key, decision.judgement, decision.measured)
        note = runner_wide_note(judged, ctx.kernels, opts.runner_share, opts.runner_min_kernels)
        if note is not None:  # one for the run: many kernels moved together
            yield self.finding(
                ctx, None, note.message, severity=Severity.INFO, numbers=note.numbers
            )
        if opts.check_groups:
            for figures in ctx.groups.values():
                yield from self._group(ctx, figures, gate)

    def _kernel(self, ctx: RuleContext, key: str, j: Judgement, m: Measured) -> Finding:
        return self.finding(
            ctx,
            key,
            f"{_against_level(ctx, key, j)}; {gate_wording(j, m.all, _pct)}",
            severity=Severity.FAIL if j.regressed else Severity.WARN,
            status=KernelStatus.REGRESSED if j.regressed else KernelStatus.SUSPECT,
            numbers=GateFigures.of(j, m.all).numbers(),
        )

    def _cleared(self, ctx: RuleContext, key: str, j: Judgement, m: Measured) -> Finding:
        """A suspect on the first measurement that the re-measurements cleared (information)."""
        return self.finding(
            ctx,
            key,
            f"{_against_level(ctx, key, j)} {cleared_wording(m.all, _pct)}",
            severity=Severity.INFO,
            numbers={**GateFigures.of(j, m.all).numbers(), "outcome": CLEARED},
        )

    def _two_level(self, ctx: RuleContext, key: str, j: Judgement, modes: Modes) -> Finding:
        """A night far from the level, at the other mode of a two-level kernel: said in words.

        Not a suspect (``rules.stats.modes``); the reader sees why a night this far from the
        level did not warn. A fall to a level the history visited once only (``visited_once``)
        warns: a regression brought back after its fix reads exactly so.
        """
        numbers = {"mode_low": modes.low, "mode_high": modes.high, "low_share": modes.low_share}
        name = ctx.kernels[key].name
        when = "tonight" if ctx.gate_mode is None else "this run"  # a nightly, or a PR
        if visited_once(modes, j.run) and modes.is_low(j.current):
            return self.finding(
                ctx,
                key,
                f"{name}: {visit_words(modes, j.current, when=when)}: a regression brought "
                "back, or the runner's other state; re-measure or compare the commits",
                severity=Severity.WARN,
                numbers=numbers,
            )
        message = f"{name}: {mode_words(modes, j.current, when=when)}, not a drop"
        return self.finding(ctx, key, message, severity=Severity.INFO, numbers=numbers)

    def _group(
        self, ctx: RuleContext, figures: GroupFigures, gate: GateDecisions
    ) -> Iterator[Finding]:
        # One finding per group: one that lost its percent of roof is reported on that measure
        # alone (its MFU against the same peak repeats the figure: "4.77% of roof", "4.77% MFU").
        # A measure the gate confirmed comes before one it suspects: a GEMM off the tensor cores
        # is a percent suspect (the night before reads on its own roof) while its time regressed.
        dropped = [
            (measure, decision)
            for measure in _measures(ctx, figures)
            if (decision := gate.get(measure.metric, figures.key)) and _dropped(decision.judgement)
        ]
        if not dropped:
            return
        # ``min`` keeps the first of equals: percent of roof before MFU or time.
        measure, decision = min(dropped, key=lambda one: not one[1].judgement.regressed)
        j, m = decision.judgement, decision.measured
        yield self.finding(
            ctx,
            figures.key,
            f"group {figures.group.name}: {measure.words(j)}; "
            f"{gate_wording(j, m.all, measure.unit)}",
            severity=Severity.FAIL if j.regressed else Severity.WARN,
            status=KernelStatus.REGRESSED if j.regressed else KernelStatus.SUSPECT,
            numbers={"measure": measure.column, **GateFigures.of(j, m.all).numbers()},
        )


def _dropped(j: Judgement) -> bool:
    """Whether the gate found a group's measure worse: regressed, or a suspect."""
    return (j.regressed or j.suspect) and not np.isnan(j.level)


@dataclass(frozen=True)
class _Measure:
    """One judged measure of a group.

    Attributes:
        metric: The gate's metric (a group's time is its own metric: ``time_s`` is the
            kernels' of time-regression).
        column: The group history's column (``numbers["measure"]`` of the finding).
        current: The run's value.
        unit: Formats a value of it.
        higher_is_better: Its direction.
        scale: (display scale, suffix) of a value in the message.
    """

    metric: str
    column: str
    current: float | None
    unit: Callable[[float], str]
    higher_is_better: bool = True
    scale: tuple[float, str] = (1.0, "")

    def words(self, j: Judgement) -> str:
        """The change in words, with figures recomputable from the finding's."""
        if self.column == "time_s":
            return (
                f"takes {j.current / j.level:.2f}× its baseline time ({self.unit(j.current)}, "
                f"level {self.unit(j.level)} ± {self.unit(j.noise)} over {j.n} runs): "
                f"a fusion broke?"
            )
        scale, suffix = self.scale
        return (
            f"{j.current * scale:.1f}{suffix}, level {j.level * scale:.1f}{suffix} ± "
            f"{j.noise * scale:.1f} over {j.n} runs ({signed_percent(j.relative_change)})"
        )


def _measures(ctx: RuleContext, figures: GroupFigures) -> tuple[_Measure, ...]:
    """A group's judged measures, in order: percent of roof, then MFU or time.

    A memory-bound group is held to its time, not to its MFU: FLOPs are not what bounds it,
    and a broken fusion there keeps each kernel's percent of roof (the same bytes at the
    same bandwidth, and more of them), so the group's total time is what shows it.
    """
    pct = _Measure(
        "percent_of_roof",
        "percent_of_roof",
        figures.percent_of_roof,
        _scaled(1.0, "% of roof"),
        scale=(1.0, "% of roof"),
    )
    if _memory_bound(ctx, figures):
        return pct, _Measure(GROUP_TIME, "time_s", figures.time_s, seconds, False)
    mfu = _Measure("mfu", "mfu", figures.mfu, _scaled(100.0, "% MFU"), scale=(100.0, "% MFU"))
    return pct, mfu


def _memory_bound(ctx: RuleContext, figures: GroupFigures) -> bool:
    """The group's declared regime, else the regime of most of its time."""
    if figures.group.regime is not None:
        return bool(figures.group.regime == MEMORY_BOUND)
    placed = [ctx.placements[k] for k in figures.keys]
    memory = sum(p.time_s or 0.0 for p in placed if p.regime == MEMORY_BOUND)
    return memory > 0.5 * sum(p.time_s or 0.0 for p in placed)
