"""What the gate decided about each kernel: judged once, before any rule checks.

The baseline rules (roof-drop, time-regression) say what the gate judges
(``Rule.gate_batches``: one metric of every kernel, or of one group, with the rule's
thresholds). The engine judges every batch first (``decide``) and hands the same
``GateDecisions`` to every rule's ``check`` and to the verdict's kernel and group rows, so no
rule depends on another having run before it, and each metric is judged by one rule.

Two figures of a row must agree with the gate:

* **The baseline.** The gate judges a kernel against the level since its last confirmed
  change, leaving out the nights of a pending run. Over other runs the two disagree: a
  kernel that rose from 50% to 60% of roof six nights ago and is back at 50% on a PR is a
  roof-drop suspect (level 60.1% over 6 runs, -16.9%) in a row that said "50.4% (n=14),
  -0.7%", a median of both levels. So the table summarises the segment's runs (the newest
  ``baseline.window`` of them).
* **Improved.** A kernel is improved when the gate says so (at night a confirmed change
  upwards; on a PR a value far beyond noise, ``rules.stats.pr``), not when one value of
  2,000 clears a per-value threshold: 300 kernels of 20 stable 2,000-kernel PRs were
  "improved" that way (``bench_pr_cli.py``), 1 is now.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from rules.context import RuleContext
from rules.errors import RuleDefinitionError
from rules.history import FloatArray
from rules.judging import GateBatch, Measured, judge_batch
from rules.levelstore import LevelCache
from rules.stats import Judgement
from rules.stats.frozen import frozen_from


@dataclass(frozen=True)
class Segment:
    """Where the gate's segment lies in a baseline series, counted from its newest value.

    Attributes:
        n: Values in the segment (NaN-free).
        after: Values after it: a pending run, left out of the level.
    """

    n: int
    after: int

    def rows(self, values: FloatArray) -> slice | None:
        """The rows of ``values`` in the segment (None: all of them, or none).

        ``values`` is the newest part of the series the gate judged, NaNs kept, oldest first.
        Most segments are longer than the baseline window: then every row is in it.
        """
        if not self.after and self.n >= values.size:
            return None  # the whole window, the usual case: no need to find its known values
        known = np.flatnonzero(~np.isnan(values))
        end = known.size - self.after
        first = max(0, end - self.n)
        if end <= first or (first == 0 and end == known.size):
            return None
        return slice(int(known[first]), int(known[end - 1]) + 1)


def segment_of(judged: Judgement, known: int) -> Segment | None:
    """``judged``'s segment in its baseline, of ``known`` values (NaNs left out), if it had one."""
    after = known - (judged.segment_start + judged.n)
    if not judged.enough or judged.n <= 0 or after < 0:
        return None
    return frozen_from(Segment, n=judged.n, after=after)  # one per kernel


def known_counts(histories: list[FloatArray]) -> list[int]:
    """The values of each history that are not NaN (one pass over all of them)."""
    if not histories:
        return []
    known = np.concatenate([[0], np.cumsum(~np.isnan(np.concatenate(histories)))])
    sizes = np.array([h.size for h in histories])
    ends = np.cumsum(sizes)
    counts: list[int] = (known[ends] - known[ends - sizes]).tolist()
    return counts


@dataclass(frozen=True)
class GateDecision:
    """The gate's decision on one kernel's (or group's) metric.

    Attributes:
        judgement: What the gate decided, with its figures.
        measured: The baseline and the measurements it judged.
        segment: Where the judged segment lies in that baseline (None: none usable).
    """

    judgement: Judgement
    measured: Measured
    segment: Segment | None

    @property
    def improved(self) -> bool:
        """Better beyond noise, as the gate decided."""
        return self.judgement.improved

    def rows(self, values: FloatArray) -> slice | None:
        """``Segment.rows`` of ``values`` (None: no segment, or all of them)."""
        return self.segment.rows(values) if self.segment else None


@dataclass(frozen=True)
class GateDecisions:
    """Every decision of the gate's pass, by metric, then kernel (or ``group:<name>``) key.

    Attributes:
        by_metric: The decisions on each metric judged (``percent_of_roof``, ``time_s``,
            ``mfu``).
        judged_by: The rule whose batches judged each metric.
    """

    by_metric: Mapping[str, Mapping[str, GateDecision]] = field(default_factory=dict)
    judged_by: Mapping[str, str] = field(default_factory=dict)

    def of(self, metric: str) -> Mapping[str, GateDecision]:
        """The decisions on ``metric`` by key (empty when no rule had it judged)."""
        return self.by_metric.get(metric, {})

    def get(self, metric: str, key: str) -> GateDecision | None:
        """The decision on ``key``'s ``metric`` (None: no rule had it judged)."""
        return self.of(metric).get(key)

    def adding(self, rule: str, decided: Mapping[str, Mapping[str, GateDecision]]) -> GateDecisions:
        """These decisions and ``rule``'s.

        Raises:
            RuleDefinitionError: Another rule judged one of ``rule``'s metrics: which of them
                the verdict's rows follow would depend on the order the rules run in.
        """
        for metric in decided:
            other = self.judged_by.get(metric)
            if other is not None and other != rule:
                raise RuleDefinitionError(f"{rule}: {metric} is judged by the gate for {other}")
        merged = dict(self.by_metric)
        for metric, table in decided.items():
            merged[metric] = MappingProxyType({**self.of(metric), **table})  # read-only
        judged_by = {**self.judged_by, **dict.fromkeys(decided, rule)}
        return GateDecisions(MappingProxyType(merged), MappingProxyType(judged_by))


def decide(
    ctx: RuleContext, batches: Iterable[GateBatch], levels: LevelCache | None
) -> dict[str, dict[str, GateDecision]]:
    """The gate's decisions on ``batches`` (each judged in one call), by metric and key."""
    decided: dict[str, dict[str, GateDecision]] = {}
    for batch in batches:
        judged = judge_batch(ctx, batch, levels)
        table = decided.setdefault(batch.metric, {})
        measured = [batch.values[key] for key in judged]
        known = known_counts([m.history for m in measured])
        for (key, judgement), m, n in zip(judged.items(), measured, known, strict=True):
            segment = segment_of(judgement, n)
            table[key] = frozen_from(
                GateDecision, judgement=judgement, measured=m, segment=segment
            )  # one per kernel
    return decided
