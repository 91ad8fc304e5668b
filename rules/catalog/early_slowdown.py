"""``early-slowdown``: a kernel too young for the gate, many times worse than each night it has."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from pydantic import Field

from rules.advice import Advice
from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.gated import GateDecision, GateDecisions
from rules.measures import one_decimal, seconds
from rules.stats import CompareOptions
from rules.verdict import Finding, KernelStatus, Severity, Stability


@dataclass(frozen=True)
class _Early:
    """One kernel's short baseline against the run, in one metric, worse side first.

    Attributes:
        metric: ``percent_of_roof`` (higher is better) or ``time_s`` (lower is better).
        nights: Its base nights' values, oldest first (NaN-free).
        current: The run's least bad measurement (the best of its re-measurements).
        needed: The base nights the gate judges from (``min_runs`` of the rule judging it).
    """

    metric: str
    nights: tuple[float, ...]
    current: float
    needed: int

    @property
    def up(self) -> bool:
        """Whether a higher value is better."""
        return self.metric == "percent_of_roof"

    @property
    def worst_night(self) -> float:
        """The base night the run is compared with: the lowest percent, the longest time."""
        return min(self.nights) if self.up else max(self.nights)

    @property
    def ratio(self) -> float:
        """How many times worse the run is than ``worst_night`` (below 1: better than it)."""
        worst, now = self.worst_night, self.current
        return worst / now if self.up else now / worst


class EarlySlowdown(Rule):
    """A kernel with too few base nights to judge is many times worse than every one of them.

    **Anti-pattern**

    | kernel | base nights (the gate needs 3) | run | worse than every base night by |
    |---|---|---|---|
    | `decode_gemv<half>` | 70.1%, 69.8% of roof | 3.9% | 17.9× |
    | `bench_layernorm[n=4096]` | 41.2 µs | 742 µs | 18.0× the time |

    The gate judges a kernel from ``min_runs`` base nights (``[baseline] min_runs``, 3):
    with fewer, nothing is judged and the kernel is listed as new, so the first PR of a new
    repository, or of a kernel added a night ago, passed 18× slower than its one night. Such
    a kernel, placed on the roof, whose like-for-like percent of roof is at least
    ``min_ratio`` times below the lowest of its 1 or 2 base nights (timed only: its time at
    least ``min_ratio`` times the longest), is a warning, never a failure: one or two nights
    give no noise to judge by. The bar is above any night-to-night swing of a real runner:
    over 55 GPU CI histories, 4,902 consecutive nights outside labelled steps moved by at
    most 3.08× (99.9th percentile 2.41×); labelled real drops were 1.07-1.56×, which stay
    unjudged until the gate has its nights. With re-measurements, the least bad of the
    commit's measurements is compared. Kernels the gate judged, and those judged against
    another card's history, are left to the gate.

    **Best practice**

    Treat it as a regression: find the change that slowed it (the base nights' commits
    bracket it) before it becomes the baseline the gate judges from. If the kernel's work
    changed on purpose (a larger problem), say so in the PR; its new nights become its
    baseline.
    """

    id = "early-slowdown"
    group = "roofline"
    default_severity = Severity.WARN
    stability = Stability.STABLE
    # Not a baseline rule of its own: it reads the gate's decisions (none on an untrusted
    # runner), and a rule that compares with the baseline must have ``min_runs`` to give.
    statuses = frozenset({KernelStatus.SUSPECT})

    class Options(RuleOptions):
        """Options of early-slowdown."""

        min_ratio: float = Field(default=4.0, gt=1)

    def check(self, ctx: RuleContext, opts: Options, gate: GateDecisions) -> Iterator[Finding]:
        """A warning per kernel the gate left unjudged for too few nights, far worse than each."""
        needed = {metric: _min_runs(ctx, rule) for metric, rule in gate.judged_by.items()}
        for key in ctx.kernels:
            if key in ctx.device_scaling or key in ctx.gate_scaling:
                continue
            early = _early(gate, key, needed)
            if early is not None and early.ratio >= opts.min_ratio:
                yield self._finding(ctx, key, early, opts.min_ratio)

    def _finding(self, ctx: RuleContext, key: str, early: _Early, min_ratio: float) -> Finding:
        """``gemv: 3.9% of roof against 70.1%, 69.8% on its 2 base nights: 17.9× below ...``."""
        value = _percent if early.up else seconds
        nights = ", ".join(value(v) for v in early.nights)
        n = len(early.nights)
        what = "below the lowest" if early.up else "the time of the longest"
        return self.finding(
            ctx,
            key,
            f"{ctx.kernels[key].name}: {value(early.current)}"
            f"{' of roof' if early.up else ''} against {nights} on its {n} base "
            f"night{'s' if n != 1 else ''}: {early.ratio:.1f}× {what} (at least {min_ratio:g}× "
            f"is beyond any night-to-night swing); not judged by the gate, which judges from "
            f"{early.needed} nights",
            advice=None if ctx.placements[key].percent_of_roof is not None else Advice.MEASURE_MORE,
            numbers={
                "measure": early.metric,
                "current": early.current,
                "worst_night": early.worst_night,
                "best_night": max(early.nights) if early.up else min(early.nights),
                "baseline_runs": n,
                "gate_min_runs": early.needed,
                "times_worse": early.ratio,
                "min_ratio": min_ratio,
            },
        )


def _percent(value: float) -> str:
    return f"{one_decimal(value)}%"


def _min_runs(ctx: RuleContext, rule_id: str) -> int:
    """The base nights ``rule_id`` judges from: its ``min_runs``, else the gate's default.

    The service passes ``[baseline] min_runs`` to the baseline rules' options.
    """
    configured = ctx.config.options.get(rule_id, {}).get("min_runs")
    return int(configured) if configured is not None else CompareOptions().min_runs


def _early(gate: GateDecisions, key: str, needed: dict[str, int]) -> _Early | None:
    """``key``'s unjudged short baseline: percent of roof when placed, else its time."""
    for metric in ("percent_of_roof", "time_s"):
        decision = gate.get(metric, key)
        if decision is not None:
            return _unjudged(metric, decision, needed[metric])
    return None


def _unjudged(metric: str, decision: GateDecision, needed: int) -> _Early | None:
    """The decision's nights and measurement, when the gate left it unjudged for too few."""
    if decision.judgement.enough:
        return None
    history = decision.measured.history
    nights = tuple(float(v) for v in history[np.isfinite(history)])
    if not 1 <= len(nights) < needed or min(nights) <= 0:
        return None
    measurements = [v for v in decision.measured.all if math.isfinite(v) and v > 0]
    if not measurements:
        return None
    up = metric == "percent_of_roof"
    current = max(measurements) if up else min(measurements)
    return _Early(metric, nights, current, needed)
