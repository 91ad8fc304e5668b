"""``regime-flip``: the regime (or the tensor-core use) changed versus the baseline."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import numpy.typing as npt

from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.crossdevice import Scaling
from rules.gated import GateDecision, GateDecisions
from rules.history import KernelHistory
from rules.measures import one_decimal, seconds, speed
from rules.roofline import COMPUTE_BOUND, MEMORY_BOUND, Placement
from rules.timing import baseline_binding_rows, median_time, median_value, percent_at
from rules.verdict import Finding, KernelStatus, Severity, Stability

#: A finding's figures, by name.
Numbers = dict[str, float | str | None]


def _is_tensor(binding: str | None) -> bool:
    return bool(binding) and str(binding).startswith("tensor_")


class RegimeFlip(Rule):
    """Regime changed versus the baseline (e.g. a fusion broke: compute → memory).

    **Anti-pattern**

    | kernel | baseline (n=14) | current | binding | intensity (dram) |
    |---|---|---|---|---|
    | `fused_mlp` | compute-bound | memory-bound | tensor_bf16 → dram | 310 → 42 FLOP/B |
    | `attn_gemm` | compute-bound (tensor_bf16) | compute-bound | tensor_bf16 → fp32 | 170 → 170 |

    The baseline's usual regime (its newest two runs' when they agree, a flip the base
    branch kept, else the majority; held by at least ``min_runs`` runs) differs from the
    current one, and the kernel is outside the borderline band. A compute-bound kernel
    whose binding precision moved off the tensor cores (``tensor_*`` → ``fp*``) is reported
    too: its percent of roof may look fine against the lower roof while it runs far slower.
    So is a kernel new on a card (a runner swap) whose work ran on tensor cores the new card
    has too, on the card before (``min_runs`` runs there), and now runs off them: precision
    is the code's, so the fall is the kernel's whatever the card.
    A kernel faster than the baseline's runs at their binding (a fusion restored) is still
    reported, as improved, with each percent at its own roof and the time between them.

    **Best practice**

    A flip to memory-bound usually means lost fusion or reuse: restore the fusion, keep
    intermediates on chip. A GEMM that fell off the tensor cores needs its dtype, layout or
    alignment fixed so the tensor-core path is taken again.
    """

    id = "regime-flip"
    group = "regime"
    default_severity = Severity.FAIL
    stability = Stability.STABLE
    compares_to_baseline = True
    statuses = frozenset({KernelStatus.REGRESSED, KernelStatus.IMPROVED})

    class Options(RuleOptions):
        """Options of regime-flip."""

        min_runs: int = 3
        to_compute_severity: Severity = Severity.WARN
        check_tensor_cores: bool = True

    def check(self, ctx: RuleContext, opts: Options, gate: GateDecisions) -> Iterator[Finding]:
        """A finding per kernel whose regime or tensor-core use flipped."""
        for key, placement in ctx.placements.items():
            if placement.regime is None or placement.borderline:
                continue
            history = ctx.kernel_history(key)
            was, count = history.usual_regime
            if was is None or count < opts.min_runs:
                if opts.check_tensor_cores and key in ctx.device_scaling:
                    yield from self._tensor_across(ctx, key, history, opts)
                continue
            if was != placement.regime:
                yield self._regime(ctx, key, history, (was, count), opts, gate)
            elif opts.check_tensor_cores and was == COMPUTE_BOUND:
                yield from self._tensor(ctx, key, history, opts, gate)

    def _regime(
        self,
        ctx: RuleContext,
        key: str,
        history: KernelHistory,
        baseline: tuple[str, int],
        opts: Options,
        gate: GateDecisions,
    ) -> Finding:
        placement = ctx.placements[key]
        was, count = baseline
        numbers: Numbers = {"baseline_regime": was, "baseline_n": count}
        binding, _ = history.usual_binding
        story, faster = f" ({count} baseline runs)", key in ctx.faster_off_binding
        if binding is not None:
            numbers |= {"baseline_binding": binding} | (
                own_roof_numbers(ctx, key, history, gate)
                if faster
                else like_for_like_numbers(ctx, key, history, binding, gate)
            )
            story = (
                _own_roof_story(numbers, binding, placement) if faster else _story(numbers, binding)
            )
        severity = Severity.FAIL if placement.regime == MEMORY_BOUND else None
        return self.finding(
            ctx,
            key,
            f"{ctx.kernels[key].name}: usually {was}, now {placement.regime}"
            f"{_bound_by(placement.binding)}{story}",
            severity=severity or opts.to_compute_severity,
            numbers=numbers,
            status=KernelStatus.IMPROVED if faster else KernelStatus.REGRESSED,
        )

    def _tensor(
        self,
        ctx: RuleContext,
        key: str,
        history: KernelHistory,
        opts: Options,
        gate: GateDecisions,
    ) -> Iterator[Finding]:
        binding = ctx.placements[key].binding
        was, count = history.usual_binding
        if was is None or count < opts.min_runs:
            return
        if _is_tensor(was) and not _is_tensor(binding):
            numbers: Numbers = {"baseline_binding": was, "baseline_n": count}
            numbers |= like_for_like_numbers(ctx, key, history, was, gate)
            yield self.finding(
                ctx,
                key,
                f"{ctx.kernels[key].name}: fell off the tensor cores, bound by {binding} "
                f"instead of {was}{_story(numbers, was)}",
                numbers=numbers,
                status=KernelStatus.REGRESSED,
            )

    def _tensor_across(
        self, ctx: RuleContext, key: str, history: KernelHistory, opts: Options
    ) -> Iterator[Finding]:
        """A kernel new on this card whose work ran on tensor cores on the card before.

        The work says it whatever the card: its precision is the code's, and this card has
        the tensor cores the baseline's work used (the roofs bind that work by them here
        too), so running its FLOPs on the CUDA cores is the kernel's fall, not the card's.
        A kernel already off them in this card's own runs is skipped: the first of those
        nights reported it.
        """
        scaled, placement = ctx.device_scaling[key], ctx.placements[key]
        own, _ = history.usual_binding
        if scaled.baseline.n < opts.min_runs or (own is not None and not _is_tensor(own)):
            return
        before = scaled.prediction.source_binding
        if placement.regime != COMPUTE_BOUND or _is_tensor(placement.binding):
            return
        if _is_tensor(before) and _is_tensor(scaled.binding):
            yield self.finding(
                ctx,
                key,
                _across_message(ctx.kernels[key].name, scaled, str(placement.binding)),
                numbers=_across_numbers(scaled),
                status=KernelStatus.REGRESSED,
            )


def _across_message(name: str, s: Scaling, binding: str) -> str:
    """``gemm: fell off the tensor cores on H100-SXM5, bound by fp32 instead of ...``."""
    level = s.baseline
    return (
        f"{name}: fell off the tensor cores on {s.device}, bound by {binding} instead of "
        f"{s.binding}: {one_decimal(level.percent)}% of the {s.prediction.source_binding} "
        f"roof over {level.n} runs on {level.device} → {one_decimal(s.percent)}% of the "
        f"{s.binding} roof on {s.device}, {seconds(level.time_s)} → {seconds(s.time_s)} "
        f"(the roofs predict {speed(s.expected_time_ratio)}, measured {speed(s.time_ratio)})"
    )


def _across_numbers(s: Scaling) -> Numbers:
    """The figures of a fall off the tensor cores across cards (``rules.crossdevice``)."""
    level = s.baseline
    return {
        "baseline_device": level.device,
        "baseline_binding": s.prediction.source_binding,
        "expected_binding": s.binding,
        "baseline_n": level.n,
        "baseline_percent_of_roof": level.percent,
        "percent_of_baseline_roof": s.percent,
        "baseline_time_s": level.time_s,
        "time_s": s.time_s,
        "expected_time_ratio": s.expected_time_ratio,
        "time_ratio": s.time_ratio,
    }


def like_for_like_numbers(
    ctx: RuleContext,
    key: str,
    history: KernelHistory,
    baseline_binding: str,
    gate: GateDecisions,
) -> Numbers:
    """The figures that show the cost of a flip: like-for-like percent of roof and time.

    The baseline's percent of roof and time are the gate's levels when it judged them (the
    figures roof-drop, time-regression and the table quote: one source); a median of the
    newest baseline runs otherwise.
    """
    placement = ctx.placements[key]
    base_pct, runs = _level(gate.get("percent_of_roof", key), history.percent_of_roof, median_value)
    base_time, _ = _level(gate.get("time_s", key), history.time_s, median_time)
    numbers: Numbers = {
        "percent_of_baseline_roof": percent_at(placement, history, baseline_binding),
        "baseline_percent_of_roof": base_pct,
        "time_s": placement.time_s,
        "baseline_time_s": base_time,
    }
    return numbers | ({"baseline_n": runs} if base_pct is not None else {})


def own_roof_numbers(
    ctx: RuleContext, key: str, history: KernelHistory, gate: GateDecisions
) -> Numbers:
    """The figures of a kernel faster off its baseline's binding: each at its own roof.

    The baseline's are the runs since it took that binding (``baseline_binding_rows``): a
    fusion main broke and kept, 79.4% of the dram roof over 5 runs, against 70.8% of fp32
    now. A like-for-like figure (1.4% of the dram roof it no longer needs) would read as a
    fall.
    """
    rows = baseline_binding_rows(history)
    part = history if rows is None else history.part(rows)
    base_pct = median_value(part.percent_of_roof)
    base_time, _ = _level(gate.get("time_s", key), history.time_s, median_time)
    numbers: Numbers = {
        "baseline_percent_of_roof": base_pct,
        "time_s": ctx.placements[key].time_s,
        "baseline_time_s": base_time,
    }
    return numbers | ({"baseline_n": part.n} if base_pct is not None else {})


def _level(
    decision: GateDecision | None,
    values: npt.ArrayLike,
    median: Callable[[npt.ArrayLike], float | None],
) -> tuple[float | None, int]:
    """(level, runs): the gate's level since the last change, else ``median`` of ``values``."""
    if decision is not None and decision.judgement.enough:
        j = decision.judgement
        if np.isfinite(j.level) and j.n > 0:
            return float(j.level), j.n
    return median(values), int(np.count_nonzero(np.isfinite(np.asarray(values, dtype=float))))


def _story(numbers: Numbers, baseline_binding: str) -> str:
    """``: level 71.9% over 30 runs → 4.8% of the tensor_bf16 roof, 338 µs → 5.1 ms (15.1×)``."""
    now, before = numbers.get("percent_of_baseline_roof"), numbers.get("baseline_percent_of_roof")
    roofs = None
    if isinstance(now, float) and isinstance(before, float):
        runs = numbers.get("baseline_n")
        roofs = (
            f"level {one_decimal(before)}% over {runs} runs → {one_decimal(now)}% of the "
            f"{baseline_binding} roof"
        )
    return _joined(roofs, _times(numbers))


def _own_roof_story(numbers: Numbers, baseline_binding: str, placement: Placement) -> str:
    """``: 79.4% of the dram roof over 5 runs → 70.8% of the fp32 roof, 309 ms → 72.4 ms``."""
    now, before = placement.percent_of_roof, numbers.get("baseline_percent_of_roof")
    roofs = None
    if now is not None and isinstance(before, float):
        roofs = (
            f"{one_decimal(before)}% of the {baseline_binding} roof over "
            f"{numbers.get('baseline_n')} runs → {one_decimal(now)}% of the "
            f"{placement.binding} roof"
        )
    return _joined(roofs, _times(numbers))


def _times(numbers: Numbers) -> str | None:
    """``338 µs → 5.1 ms (15.1×)``, or ``(4.3× faster)`` (None without both times)."""
    time_now, time_before = numbers.get("time_s"), numbers.get("baseline_time_s")
    if isinstance(time_now, float) and isinstance(time_before, float) and time_before > 0:
        pace = speed(time_now / time_before, digits=1)  # a fusion restored flips back faster
        return f"{seconds(time_before)} → {seconds(time_now)} ({pace})"
    return None


def _joined(*parts: str | None) -> str:
    known = [part for part in parts if part]
    return ": " + ", ".join(known) if known else ""


def _bound_by(binding: str | None) -> str:
    """`` (bound by dram)``; nothing where no resource binds (a roof that takes no time)."""
    return f" (bound by {binding})" if binding else ""
