"""A kernel group's row of the verdict: its figures and its baselines (``GroupVerdict``).

The group's percent-of-roof and MFU baselines are read over the gate's segment when the gate
judged them, so the "was" beside a group's figure is the level its finding speaks of.
"""

from __future__ import annotations

from rules.context import RuleContext
from rules.gated import GateDecisions
from rules.groups import GROUP_TIME, GroupFigures
from rules.summary import summarise
from rules.timing import median_time, ratio
from rules.verdict import BaselineSummary, GroupVerdict


def _group_baseline(
    gate: GateDecisions, figures: GroupFigures, metric: str, current: float | None
) -> tuple[BaselineSummary, slice | None]:
    """A group's baseline of ``metric``: the gate's segment when the gate judged it."""
    values = figures.history[metric].to_numpy(dtype=float)
    gated = gate.get(metric, figures.key)
    rows = gated.rows(values) if gated else None
    commits = [str(c) for c in figures.history["commit"]]
    summary, _ = summarise(values, current, metric=metric, commits=commits, rows=rows)
    return summary, rows


def _at_gate_level(summary: BaselineSummary, gate: GateDecisions, key: str) -> BaselineSummary:
    """The MFU baseline at the level the gate judged it against, like the percent-of-roof cell.

    The percent-of-roof baseline of a group with a finding shows the gate's level over the
    segment; an MFU "was" taken as the median of the newest runs beside it read differently
    (71.8% beside 71.9% for the same GEMMs).
    """
    decision = gate.get("mfu", key)
    if decision is None or not decision.judgement.enough or summary.center is None:
        return summary
    judged = decision.judgement
    return summary.model_copy(update={"center": judged.level, "spread": judged.noise})


def _time_rows(gate: GateDecisions, figures: GroupFigures, rows: slice | None) -> slice:
    """The runs of the group's baseline time: its time gate's segment, else ``rows``.

    A group judged on its time (``GROUP_TIME``) has its own level: after a change confirmed
    in time its percent of roof can still be pending, and a row read over that segment said
    12.7x its baseline time on a night whose gate held the new time for the level.
    """
    timed = gate.get(GROUP_TIME, figures.key)
    if timed is not None and timed.segment is not None:
        rows = timed.rows(figures.history["time_s"].to_numpy(dtype=float))
    return rows or slice(None)


def group_verdict(ctx: RuleContext, figures: GroupFigures, gate: GateDecisions) -> GroupVerdict:
    """A group's figures and baselines."""
    pct_summary, rows = _group_baseline(gate, figures, "percent_of_roof", figures.percent_of_roof)
    mfu_summary = _at_gate_level(
        _group_baseline(gate, figures, "mfu", figures.mfu)[0], gate, figures.key
    )
    base_time = median_time(figures.history["time_s"].iloc[_time_rows(gate, figures, rows)])
    pct_summary = pct_summary.model_copy(update={"time_s": base_time})
    group = figures.group
    return GroupVerdict(
        name=group.name,
        kernels=figures.keys,
        time_s=figures.time_s,
        time_share=figures.time_s / ctx.total_time_s if ctx.total_time_s else 0.0,
        percent_of_roof=figures.percent_of_roof,
        mfu=figures.mfu,
        mfu_precision=figures.precision,
        time_ratio=ratio(figures.time_s, base_time),
        regime=group.regime,
        target_percent=group.target_percent,
        owners=group.owners,
        baseline=pct_summary if pct_summary.n else None,
        mfu_baseline=mfu_summary if mfu_summary.n else None,
    )
