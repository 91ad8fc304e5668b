"""``work-change``: a kernel does more (or less) work than its baseline did: its FLOPs moved."""

from __future__ import annotations

from collections.abc import Iterator

from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.gated import GateDecisions
from rules.timing import median_time
from rules.verdict import Finding, Severity, Stability


class WorkChange(Rule):
    """A kernel's work moved: its FLOP count left its baseline's, and its time went along.

    **Anti-pattern**

    | kernel | baseline FLOPs | this run | time |
    |---|---|---|---|
    | `gemm_bf16` | 1.0e10 | 2.0e10 (2.00×) | 2.00× |

    Percent of roof measures how fast a kernel does its work, not how much of it there is:
    a GEMM now called twice as often (a loop that runs twice, a recomputation, a cache of
    results that stopped working) or on a larger shape keeps its percent of roof while the
    GPU time grows. A PR whose run took 1.29x the GPU time that way read "All 4 kernels
    unchanged". FLOP counts are exact (a shape and a launch count fix them), so any move
    past ``tolerance`` is the workload's, not noise.

    **Best practice**

    If the workload grew on purpose (a larger benchmark shape), the baseline moves with
    the next nights. If not, look for the new launches: a loop, a recomputation, a lost
    cache of an intermediate. A kernel keyed by its shape (``keys``) keeps one series per
    shape, so a shape change is a new kernel instead.
    """

    id = "work-change"
    group = "time"
    default_severity = Severity.WARN
    stability = Stability.PREVIEW

    class Options(RuleOptions):
        """Options of work-change."""

        tolerance: float = 0.05

    def check(self, ctx: RuleContext, opts: Options, gate: GateDecisions) -> Iterator[Finding]:
        """A finding per kernel whose FLOPs moved past ``tolerance`` of its baseline's median."""
        if ctx.comparable_history.empty:
            return
        for key, kernel in ctx.kernels.items():
            flops = ctx.placements[key].total_flops
            if not flops or key in ctx.device_scaling or ctx.is_new(key):
                continue
            history = ctx.kernel_history(key)
            before = median_time(history.total_flops)  # the median of the positive counts
            if not before or abs(flops / before - 1) <= opts.tolerance:  # 0.0: subnormal counts
                continue
            ratio = flops / before
            base_time = median_time(history.time_s)
            time_ratio = kernel.duration_s / base_time if base_time else None
            yield self.finding(
                ctx,
                key,
                _message(kernel.name, flops, before, time_ratio),
                severity=None if ratio > 1 else Severity.INFO,
                numbers={"flops": flops, "baseline_flops": before, "work_ratio": ratio}
                | ({"time_ratio": time_ratio} if time_ratio else {}),
            )


def _message(name: str, flops: float, before: float, time_ratio: float | None) -> str:
    """``gemm: 2e+10 FLOPs where its baseline did 1e+10 (2.00×), in 2.00× the time: ...``."""
    more = flops > before
    time = f", in {time_ratio:.2f}× the time" if time_ratio else ""
    why = "more launches or a larger shape" if more else "fewer launches or a smaller shape"
    return (
        f"{name}: {flops:.3g} FLOPs where its baseline did {before:.3g} "
        f"({flops / before:.2f}×){time}: {why}; its percent of roof measures its speed, "
        "not how much work it does"
    )
