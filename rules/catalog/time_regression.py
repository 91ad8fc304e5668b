"""``time-regression``: wall time regressed (records without counters, or with the same work)."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import Field

from rules.advice import Advice
from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.measures import comparison_numbers, seconds, signed_percent, time_samples
from rules.stats import CompareOptions, compare_to_baseline
from rules.timing import baseline_binding, median_value
from rules.verdict import Finding, Severity, Stability


class TimeRegression(Rule):
    """Wall time regressed: records without counters, or kernels doing the same work slower.

    **Anti-pattern**

    | benchmark | baseline time (n=14) | current | change |
    |---|---|---|---|
    | `bench_layernorm[n=4096]` | 41.2 µs ± 0.5 | 47.9 µs | +16.3% |
    | `verify_gemm` (tensor_bf16 → fp32, same FLOPs and bytes) | 0.34 ms ± 0.01 | 5.10 ms | 15.1× |

    Without FLOP and byte counts a record cannot be placed on the roofline, so its time is
    judged instead: the median of the run's samples against the baseline median, beyond
    ``z_threshold`` robust spreads and by at least ``min_effect``. Time is the ground truth, so
    a placed kernel whose work is unchanged (total FLOPs and DRAM bytes within
    ``work_tolerance`` of the baseline's) but whose binding precision or tier changed is judged
    on time too: its percent of roof is against a different roof and can hide the slowdown.
    (With the binding unchanged, percent of roof is the time ratio and roof-drop reports it.)

    **Best practice**

    Find the change that slowed it (the baseline's commit range brackets it). Then collect
    counters (``ncu --set roofline``) or declare a work model, so the next verdict can say
    where the kernel sits against the roof and what class of fix applies.
    """

    id = "time-regression"
    group = "time"
    default_severity = Severity.FAIL
    stability = Stability.STABLE
    compares_to_baseline = True

    class Options(RuleOptions, CompareOptions):
        """Thresholds (see ``rules.stats.CompareOptions``)."""

        work_tolerance: float = Field(default=0.02, ge=0)

    def check(self, ctx: RuleContext, opts: Options) -> Iterator[Finding]:
        """A finding per kernel judged on time whose time rose beyond noise."""
        for key, placement in ctx.placements.items():
            placed = placement.percent_of_roof is not None
            if placed and not _same_work_new_binding(ctx, key, opts.work_tolerance):
                continue
            kernel = ctx.kernels[key]
            values = ctx.kernel_history(key).time_s
            cmp = compare_to_baseline(
                values, time_samples(kernel), higher_is_better=False, options=opts
            )
            if cmp.regressed:
                yield self.finding(
                    ctx,
                    key,
                    f"{kernel.name}: {seconds(cmp.center)} → {seconds(cmp.current)} "
                    f"({cmp.current / cmp.center:.1f}× the time"
                    f"{', same FLOPs and bytes' if placed else ''}), baseline ± "
                    f"{seconds(cmp.spread)} over {cmp.n} runs "
                    f"({signed_percent(cmp.relative_change)})",
                    advice=None if placed else Advice.MEASURE_MORE,
                    numbers={"baseline_time_s": cmp.center, **comparison_numbers(cmp, opts)},
                )


def _close(now: float, before: float | None, tolerance: float) -> bool:
    if before is None:
        return now == 0
    return abs(now - before) <= tolerance * max(abs(before), abs(now))


def _same_work_new_binding(ctx: RuleContext, key: str, tolerance: float) -> bool:
    """Whether the kernel does its baseline's work (FLOPs, DRAM bytes) under a new binding."""
    placement, history = ctx.placements[key], ctx.kernel_history(key)
    binding = baseline_binding(history)
    if binding is None or binding == placement.binding:
        return False
    _, nbytes = ctx.kernels[key].work()
    flops_before = median_value(history.total_flops)
    bytes_before = median_value(history.bytes_dram)
    return _close(placement.total_flops, flops_before, tolerance) and _close(
        nbytes.get("dram", 0.0), bytes_before, tolerance
    )
