"""``roof-drop``: percent of roof fell versus the baseline's current level, confirmed."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
from pydantic import Field

from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.figures import GateFigures
from rules.gated import GateDecisions
from rules.groups import GroupFigures
from rules.judging import GateBatch, Measured, Samples, gate_wording, measured
from rules.measures import column, percent_samples, signed_percent
from rules.stats import GATE_Z, CompareOptions, Judgement, Modes, mode_words
from rules.timing import judged_binding, like_for_like_percent
from rules.verdict import Finding, KernelStatus, Severity, Stability


def _pct(value: float) -> str:
    return f"{value:.1f}%"


def _like_for_like(ctx: RuleContext, key: str) -> Samples:
    """Percent-of-roof samples against the roof the baseline was bound by (issue 13).

    The run's and each re-measurement's: the same kernel and work, so the same rescaling.
    """
    now_placed = ctx.placements[key]
    now = now_placed.percent_of_roof
    other = like_for_like_percent(now_placed, ctx.kernel_history(key))
    factor = other / now if now and other is not None else 1.0
    return lambda kernel, placement: [s * factor for s in percent_samples(kernel, placement)]


def _percent(ctx: RuleContext, key: str) -> Measured:
    """``key``'s gate baseline of percent of roof and its measurements, like for like."""
    history = ctx.gate_kernel_history(key).percent_of_roof
    return measured(ctx, key, history, _like_for_like(ctx, key))


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
    change far beyond noise fails at once (``[rules.gate]``). Thresholds grow with the
    number of kernels judged. Kernel groups are held to the same test on their
    time-weighted percent of roof and their MFU (finding on ``group:<name>``).

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

    def gate_batches(self, ctx: RuleContext, opts: Options) -> Iterator[GateBatch]:
        """Every placed kernel's percent of roof (one batch), and each group's percent and MFU."""
        values = {
            key: _percent(ctx, key)
            for key, placement in ctx.placements.items()
            if placement.percent_of_roof is not None and key not in ctx.device_scaling
        }
        yield GateBatch("percent_of_roof", values, opts)
        if not opts.check_groups:
            return
        for figures in ctx.groups.values():
            for name, current, _, _ in _measures(figures):
                if current is None or figures.judged_history.empty:
                    continue
                m = Measured(column(figures.judged_history, name), float(current))
                yield GateBatch(name, {figures.key: m}, opts)  # a group is its own family

    def check(self, ctx: RuleContext, opts: Options, gate: GateDecisions) -> Iterator[Finding]:
        """A finding per kernel and per group whose percent of roof (or MFU) dropped."""
        judged = gate.of("percent_of_roof")
        for key in ctx.placements:
            decision = judged.get(key)
            if decision and (decision.judgement.regressed or decision.judgement.suspect):
                yield self._kernel(ctx, key, decision.judgement, decision.measured)
            elif decision and decision.judgement.modes is not None:
                yield self._two_level(ctx, key, decision.judgement, decision.judgement.modes)
        if opts.check_groups:
            for figures in ctx.groups.values():
                yield from self._group(ctx, figures, gate)

    def _kernel(self, ctx: RuleContext, key: str, j: Judgement, m: Measured) -> Finding:
        binding = judged_binding(ctx.placements[key], ctx.kernel_history(key))
        return self.finding(
            ctx,
            key,
            f"{ctx.kernels[key].name}: {j.current:.1f}% of roof ({binding}), "
            f"level {j.level:.1f}% ± {j.noise:.1f} over {j.n} runs "
            f"({signed_percent(j.relative_change)}); {gate_wording(j, m.all, _pct)}",
            severity=Severity.FAIL if j.regressed else Severity.WARN,
            status=KernelStatus.REGRESSED if j.regressed else KernelStatus.SUSPECT,
            numbers=GateFigures.of(j, m.all).numbers(),
        )

    def _two_level(self, ctx: RuleContext, key: str, j: Judgement, modes: Modes) -> Finding:
        """A night far from the level, at the other mode of a two-level kernel: said in words.

        Not a suspect (``rules.stats.modes``); the reader sees why a night this far from the
        level did not warn.
        """
        return self.finding(
            ctx,
            key,
            f"{ctx.kernels[key].name}: {mode_words(modes, j.current)}, not a drop",
            severity=Severity.INFO,
            numbers={"mode_low": modes.low, "mode_high": modes.high, "low_share": modes.low_share},
        )

    def _group(
        self, ctx: RuleContext, figures: GroupFigures, gate: GateDecisions
    ) -> Iterator[Finding]:
        # One finding per group: one that lost its percent of roof is reported on that measure
        # alone (its MFU against the same peak repeats the figure: "4.77% of roof", "4.77% MFU").
        found = False
        for name, _, scale, unit in _measures(figures):
            decision = gate.get(name, figures.key)
            if decision is None or (name == "mfu" and found):
                continue
            j, m = decision.judgement, decision.measured
            if not (j.regressed or j.suspect) or np.isnan(j.level):
                continue
            found = True
            yield self.finding(
                ctx,
                figures.key,
                f"group {figures.group.name}: {j.current * scale:.1f}{unit}, level "
                f"{j.level * scale:.1f}{unit} ± {j.noise * scale:.1f} over {j.n} runs "
                f"({signed_percent(j.relative_change)}); "
                f"{gate_wording(j, m.all, _scaled(scale, unit))}",
                severity=Severity.FAIL if j.regressed else Severity.WARN,
                status=KernelStatus.REGRESSED if j.regressed else KernelStatus.SUSPECT,
                numbers={"measure": name, **GateFigures.of(j, m.all).numbers()},
            )


def _measures(figures: GroupFigures) -> tuple[tuple[str, float | None, float, str], ...]:
    """A group's judged measures: (metric, current value, display scale, unit)."""
    return (
        ("percent_of_roof", figures.percent_of_roof, 1.0, "% of roof"),
        ("mfu", figures.mfu, 100.0, "% MFU"),
    )
