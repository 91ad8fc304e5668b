"""``time-regression``: wall time regressed for records without counters."""

from __future__ import annotations

from collections.abc import Iterator

from rules.advice import Advice
from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.measures import comparison_numbers, seconds, signed_percent, time_samples
from rules.stats import CompareOptions, compare_to_baseline
from rules.verdict import Finding, Severity, Stability


class TimeRegression(Rule):
    """Wall time regressed for records that have no counters (plain microbenchmarks).

    **Anti-pattern**

    | benchmark | baseline time (n=14) | current | change |
    |---|---|---|---|
    | `bench_layernorm[n=4096]` | 41.2 µs ± 0.5 | 47.9 µs | +16.3% |

    Without FLOP and byte counts a record cannot be placed on the roofline, so its time is
    judged instead: the median of the run's samples against the baseline median, beyond
    ``z_threshold`` robust spreads and by at least ``min_effect``.

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

    def check(self, ctx: RuleContext, opts: Options) -> Iterator[Finding]:
        """A finding per unplaced kernel whose time rose beyond noise."""
        for key, placement in ctx.placements.items():
            if placement.percent_of_roof is not None:
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
                    f"{kernel.name}: {seconds(cmp.current)}, baseline {seconds(cmp.center)} "
                    f"± {seconds(cmp.spread)} over {cmp.n} runs "
                    f"({signed_percent(cmp.relative_change)})",
                    advice=Advice.MEASURE_MORE,
                    numbers=comparison_numbers(cmp, opts),
                )
