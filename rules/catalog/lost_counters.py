"""``lost-counters``: a kernel its newest baseline run placed lost the counters to place it now."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping

from collectors.schema import KernelRecord
from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.gated import GateDecisions
from rules.measures import one_decimal
from rules.roofline import NO_WORK, Placement
from rules.timing import lacks_a_count
from rules.verdict import Finding, Severity, Stability


class LostCounters(Rule):
    """A kernel lost its counters: its newest baseline run placed it, this run cannot (fully).

    **Anti-pattern**

    | kernel | newest baseline run | this run |
    |---|---|---|
    | `gemv_bf16` | 85.1% of roof, memory-bound | no FLOP counts, no byte counts |
    | `gemm_bf16` | 91.0% of roof, compute-bound | byte counts, no FLOP counts: regime unknown |

    The profiler ran without the roofline metrics (``ncu`` without ``--set roofline``, or a
    ``--metrics`` list that lost one), a new ncu version renamed a metric, a benchmark lost
    its declared work, or the report was cut. The kernel is then judged on its time alone:
    the run passes while a fall off the tensor cores or a regime flip goes unseen. A run in
    which half the kernels lost their counters read "all 2,000 kernels unchanged". Losing
    one kind is as quiet: with bytes but no FLOPs, a GEMM has no regime, and its percent of
    roof is of the memory roof alone.

    **Best practice**

    Profile with ``ncu --set roofline`` (or the ``SpeedOfLight_RooflineChart`` and
    ``MemoryWorkloadAnalysis`` sections), and pin the ncu version the runners use. A
    benchmark without counters keeps its declared work (``work_models``).
    """

    id = "lost-counters"
    group = "inventory"
    default_severity = Severity.WARN
    # Stable since 0.2.0: a lost counter is a fact read off the report, not an estimate;
    # as a preview finding it left "PASS, all kernels unchanged" on a kernel with no regime.
    stability = Stability.STABLE

    class Options(RuleOptions):
        """Options of lost-counters."""

        each_up_to: int = 10

    def check(self, ctx: RuleContext, opts: Options, gate: GateDecisions) -> Iterator[Finding]:
        """A finding per kernel that left the roof; one for the run past ``each_up_to``.

        A profile that lost a metric takes every kernel off the roof at once: one finding
        says so, where 1,000 would each say the same.
        """
        if ctx.comparable_history.empty:
            return
        lost = dict(_lost(ctx))
        if len(lost) > opts.each_up_to:
            yield self.finding(ctx, None, _run_message(ctx, lost), numbers=_run_numbers(ctx, lost))
            return
        for key, before in lost.items():
            kernel, placement = ctx.kernels[key], ctx.placements[key]
            lacks = "; ".join(placement.missing) or "no roof"
            yield self.finding(
                ctx,
                key,
                f"{kernel.name}: on the roof in the newest baseline run ({one_decimal(before)}% "
                f"of roof), {_now(placement)}; it lacks {lacks}",
                numbers={"baseline_percent_of_roof": before},
            )


def _now(placement: Placement) -> str:
    """What the kernel lost: the roof (judged on time alone), or its regime."""
    if placement.percent_of_roof is None:
        return "off it now and judged on its time alone"
    return (
        f"no regime now: {one_decimal(placement.percent_of_roof)}% is of the "
        f"{placement.binding} roof alone, and a regime flip goes unseen"
    )


def _lost(ctx: RuleContext) -> Iterator[tuple[str, float]]:
    """(key, its newest baseline percent of roof) of each timed kernel that lost counters.

    Lost: off the roof now, or with no regime now where the newest baseline run had one
    because a kind of counter (FLOPs or bytes) is gone (not a work count of zero).
    """
    for key, kernel in ctx.kernels.items():
        placement = ctx.placements[key]
        if not kernel.duration_s or placement.regime is not None:
            continue  # not measured at all, or placed with a regime (most kernels)
        history = ctx.kernel_history(key)
        if not len(history.percent_of_roof) or math.isnan(history.percent_of_roof[-1]):
            continue  # new, or off the roof in the newest run already (said then)
        if _lacks_counters(kernel, placement, history.regime[-1]):
            yield key, float(history.percent_of_roof[-1])


def _lacks_counters(kernel: KernelRecord, placement: Placement, regime: str | None) -> bool:
    """Off the roof, or (placed without one) lacking a kind of count where it had ``regime``.

    Counters that all read zero (a small kernel whose bytes hit L2 alone) are counters still.
    """
    if placement.percent_of_roof is None:
        return NO_WORK not in placement.missing
    return regime is not None and lacks_a_count(kernel)


def _share(ctx: RuleContext, keys: Iterable[str]) -> float:
    total = ctx.total_time_s
    return sum(ctx.kernels[k].duration_s for k in keys) / total if total else 0.0


def _run_message(ctx: RuleContext, lost: Mapping[str, float]) -> str:
    """``1,000 kernels (50.0% of GPU time) ... off it now ...: a, b, c and 997 more. ...``."""
    heaviest = sorted(lost, key=lambda k: -ctx.kernels[k].duration_s)
    names = ", ".join(ctx.kernels[k].name for k in heaviest[:3])
    more = f" and {len(lost) - 3:,} more" if len(lost) > 3 else ""
    lacks = "; ".join(ctx.placements[heaviest[0]].missing) or "no roof"
    return (
        f"{len(lost):,} kernels ({100 * _share(ctx, lost):.1f}% of GPU time) on the roof in "
        f"the newest baseline run are off it now, judged on their time alone: {names}{more}. "
        f"The heaviest lacks {lacks}: was the profile run without its roofline metrics?"
    )


def _run_numbers(ctx: RuleContext, lost: Mapping[str, float]) -> dict[str, float | str | None]:
    return {"kernels_lost": len(lost), "time_share": _share(ctx, lost)}
