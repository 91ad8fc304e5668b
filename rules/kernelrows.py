"""What the engine builds the verdict's kernel rows from, besides each kernel's own figures.

Each row reads its own findings (``findings_by_kernel``), its baseline summarised for many
kernels at once where that was done (``summarised_row``, ``rules.kernelbaselines``), and the
baseline kernels absent from the run get rows of their own (``missing_verdicts``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from rules.context import RuleContext
from rules.gated import GateDecisions
from rules.summary import summarise
from rules.timing import with_time
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
