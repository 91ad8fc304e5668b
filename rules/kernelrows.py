"""What the engine builds the verdict's kernel rows from, besides each kernel's own figures.

Each row reads its own findings (``findings_by_kernel``), its baseline summarised for many
kernels at once where that was done (``summarised_row``, ``rules.kernelbaselines``), and the
baseline kernels absent from the run get rows of their own (``missing_verdicts``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from rules.acrossdevices import device_baseline
from rules.context import RuleContext
from rules.gated import GateDecisions
from rules.summary import summarise
from rules.timing import baseline_binding_rows, judged_binding, sparkline_values, with_time
from rules.verdict import BaselineSummary, Finding, KernelStatus, KernelVerdict


def findings_by_kernel(findings: Iterable[Finding]) -> dict[str, list[Finding]]:
    """``findings`` by the kernel they name, in order: each row reads its own, not every one.

    (Every row scanning every finding made a run with many findings quadratic in kernels.)
    """
    found: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.kernel is not None:
            found.setdefault(finding.kernel, []).append(finding)
    return found


def summarised_row(
    summarised: Mapping[str, BaselineSummary] | None, gate: GateDecisions, metric: str, key: str
) -> tuple[BaselineSummary, bool] | None:
    """``key``'s summarised baseline and whether the gate called it improved (None: not here)."""
    summary = (summarised or {}).get(key)
    if summary is None:
        return None
    gated = gate.get(metric, key)
    return summary, gated is not None and gated.improved


def row_baseline(
    ctx: RuleContext, gate: GateDecisions, key: str, metric: str, current: float | None
) -> tuple[BaselineSummary, bool]:
    """``key``'s baseline on another card, else on its own (``_kernel_baseline``)."""
    return device_baseline(ctx, gate, key) or _kernel_baseline(ctx, gate, key, metric, current)


def _kernel_baseline(
    ctx: RuleContext, gate: GateDecisions, key: str, metric: str, current: float | None
) -> tuple[BaselineSummary, bool]:
    """``key``'s baseline and whether it improved, as the gate decided (``rules.gated``).

    A kernel the gate did not judge (the baseline rules deselected, or faster off its
    baseline's binding) is compared with the window, or with the runs at that binding.
    """
    history = ctx.kernel_history(key)
    values = history.time_s if metric == "time_s" else history.percent_of_roof
    gated = gate.get(metric, key)
    rows = gated.rows(values) if gated else _at_the_old_binding(ctx, key)
    summary, comparison = summarise(
        values,
        current,
        metric=metric,
        commits=history.commit,
        regimes=history.regime,
        higher_is_better=metric != "time_s",
        rows=rows,
    )
    improved = gated.improved if gated else bool(comparison and comparison.improved)
    if metric == "percent_of_roof":
        summary = summary.model_copy(update=_percent_fields(ctx, key))
    return with_time(summary, history if rows is None else history.part(rows)), improved


def _at_the_old_binding(ctx: RuleContext, key: str) -> slice | None:
    """The runs since the baseline took the binding a kernel faster off it left (None: all).

    Main broke a fusion and kept it (memory-bound, 309 ms); a PR restoring it (compute-bound,
    72 ms) is compared with main's nights at the dram roof, not with a window still holding
    the fused ones, whose median time read 73.5 ms and percent 70.9, a mix of two roofs.
    """
    if key not in ctx.faster_off_binding:
        return None
    return baseline_binding_rows(ctx.kernel_history(key))


def _percent_fields(ctx: RuleContext, key: str) -> dict[str, object]:
    """The sparkline on the roof of the row's current figure (``rules.timing``).

    A kernel faster off its baseline's binding, or with one kind of count now
    (``partly_counted``), is read at its own roof and has no change: its percent and the
    baseline's are of two roofs.
    """
    placement, history = ctx.placements[key], ctx.kernel_history(key)
    faster = key in ctx.faster_off_binding or key in ctx.partly_counted
    reference = placement.binding if faster else judged_binding(placement, history)
    now = (ctx.like_for_like[key], placement.time_s or 0.0)
    fields: dict[str, object] = {"history": sparkline_values(history, reference, now)}
    return {**fields, "relative_change": None} if faster else fields


def missing_verdicts(ctx: RuleContext, findings: Sequence[Finding]) -> list[KernelVerdict]:
    """Baseline kernels absent from the run (a finding set status ``missing``), as entries.

    Their figures are the baseline's (percent of roof, median time, binding); the run's own
    (time, placement, measurements) are empty, so a consumer sees every kernel of both.
    """
    keys = {
        f.kernel: f.kernel_name or f.kernel
        for f in findings
        if f.status == KernelStatus.MISSING and f.kernel and f.kernel not in ctx.kernels
    }
    return [_missing_verdict(ctx, key, name) for key, name in keys.items()]


def _missing_verdict(ctx: RuleContext, key: str, name: str) -> KernelVerdict:
    history = ctx.kernel_history(key)
    summary, _ = summarise(
        history.percent_of_roof, None, commits=history.commit, regimes=history.regime
    )
    summary = with_time(summary, history)
    group = ctx.config.group_of(key, name, None)
    return KernelVerdict(
        key=key,
        name=name,
        group=group.name if group else None,
        time_s=0.0,
        time_share=0.0,
        percent_of_roof=None,
        regime=None,
        binding=None,
        roof=ctx.roof.label,
        status=KernelStatus.MISSING,
        baseline=summary if summary.n else None,
    )
