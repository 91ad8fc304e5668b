"""``time-regression``: wall time regressed for records without counters."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import Field

from collectors.schema import KernelRecord
from rules.advice import Advice
from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.judging import gate_wording, judge_all, judgement_numbers, measured
from rules.measures import seconds, signed_percent, time_samples
from rules.roofline import Placement
from rules.stats import GATE_Z, CompareOptions
from rules.verdict import Finding, Severity, Stability


class TimeRegression(Rule):
    """Wall time regressed for records that have no counters (plain microbenchmarks).

    **Anti-pattern**

    | benchmark | baseline time (n=14) | current | change |
    |---|---|---|---|
    | `bench_layernorm[n=4096]` | 41.2 µs ± 0.5 | 47.9 µs | +16.3% |

    Without FLOP and byte counts a record cannot be placed on the roofline, so its time is
    judged instead, by the same gate as ``roof-drop``: the median of the run's samples
    against the level since the last confirmed change, beyond ``z_threshold`` noise units
    and by at least ``min_effect`` (suspect), confirmed by the next nights or by a
    re-measurement of the commit (regressed).

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
    statuses = frozenset({"regressed", "suspect"})

    class Options(RuleOptions, CompareOptions):
        """Thresholds (see ``rules.stats.GateOptions``); the protocol is ``[rules.gate]``."""

        z_threshold: float = Field(default=GATE_Z, gt=0)

    def check(self, ctx: RuleContext, opts: Options) -> Iterator[Finding]:
        """A finding per unplaced kernel whose time rose beyond noise."""
        values = {
            key: measured(ctx, key, ctx.kernel_history(key).time_s, _time)
            for key, placement in ctx.placements.items()
            if placement.percent_of_roof is None
        }
        for key, j in judge_all(ctx, values, opts, higher_is_better=False).items():
            if not (j.regressed or j.suspect):
                continue
            m = values[key]
            yield self.finding(
                ctx,
                key,
                f"{ctx.kernels[key].name}: {seconds(j.current)}, level {seconds(j.level)} "
                f"± {seconds(j.noise)} over {j.n} runs "
                f"({signed_percent(j.relative_change)}); {gate_wording(j, m.all, seconds)}",
                severity=Severity.FAIL if j.regressed else Severity.WARN,
                status="regressed" if j.regressed else "suspect",
                advice=Advice.MEASURE_MORE,
                numbers=judgement_numbers(j, m.all),
            )


def _time(kernel: KernelRecord, placement: Placement) -> list[float]:
    return time_samples(kernel)
