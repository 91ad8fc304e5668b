"""``lost-counters``: a kernel its newest baseline run placed on the roof cannot be placed now."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping

from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.gated import GateDecisions
from rules.measures import one_decimal
from rules.verdict import Finding, Severity, Stability


class LostCounters(Rule):
    """A kernel left the roofline: its newest baseline run placed it, this run cannot.

    **Anti-pattern**

    | kernel | newest baseline run | this run |
    |---|---|---|
    | `gemv_bf16` | 85.1% of roof, memory-bound | no FLOP counts, no byte counts |

    The profiler ran without the roofline metrics (``ncu`` without ``--set roofline``, or a
    ``--metrics`` list that lost one), a new ncu version renamed a metric, a benchmark lost
    its declared work, or the report was cut. The kernel is then judged on its time alone:
    the run passes while a fall off the tensor cores or a regime flip goes unseen. A run in
    which half the kernels lost their counters read "all 2,000 kernels unchanged".

    **Best practice**

    Profile with ``ncu --set roofline`` (or the ``SpeedOfLight_RooflineChart`` and
    ``MemoryWorkloadAnalysis`` sections), and pin the ncu version the runners use. A
    benchmark without counters keeps its declared work (``work_models``).
    """

    id = "lost-counters"
    group = "inventory"
    default_severity = Severity.WARN
    stability = Stability.PREVIEW

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
                f"of roof), off it now and judged on its time alone; it lacks {lacks}",
                numbers={"baseline_percent_of_roof": before},
            )


def _lost(ctx: RuleContext) -> Iterator[tuple[str, float]]:
    """(key, its newest baseline percent of roof) of each timed kernel that left the roof."""
    for key, kernel in ctx.kernels.items():
        if ctx.placements[key].percent_of_roof is not None or not kernel.duration_s:
            continue  # placed, or not measured at all (unplaced either way)
        history = ctx.kernel_history(key).percent_of_roof
        if len(history) and not math.isnan(history[-1]):  # on the roof in the newest run
            yield key, float(history[-1])


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
