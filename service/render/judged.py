"""One set of figures: a row's baseline in the figures its finding states.

The verdict's baseline summary covers the newest ``baseline.window`` runs of a kernel's
segment (14 by default), the gate judges against the whole segment (30 nights, say). A row
that said ``71.8% ±0.4 (n=14)`` beside a finding that says ``71.9% ± 0.6 over 30 runs`` left
the reader to wonder which to trust. A kernel (or group) with a gate finding on the row's
metric shows the finding's level, noise and run count instead; the others keep the summary,
and the table says which window each shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rules import BaselineSummary, Finding, GateFigures, GroupVerdict, KernelVerdict, Verdict

#: The gate rule that judges each baseline metric of a kernel row.
_GATE_RULE = {"percent_of_roof": "roof-drop", "time_s": "time-regression"}


def gate_of(findings: Sequence[Finding], rule: str, measure: str | None) -> GateFigures | None:
    """The gate figures of the finding of ``rule`` on ``measure`` (None: a kernel's own)."""
    for finding in findings:
        if finding.rule == rule and finding.measure == measure and finding.gate is not None:
            return finding.gate
    return None


def as_judged(base: BaselineSummary, gate: GateFigures | None) -> BaselineSummary:
    """``base`` with the gate's level, noise, run count and change, when it has a gate."""
    if gate is None:
        return base
    update = {
        "center": gate.level,
        "spread": gate.noise,
        "n": gate.n,
        "relative_change": gate.relative_change,
    }
    return base.model_copy(update=update)


def judged_kernel(kernel: KernelVerdict, findings: Sequence[Finding]) -> KernelVerdict:
    """``kernel`` with its baseline in the figures of its gate finding (if it has one)."""
    base = kernel.baseline
    if base is None or base.center is None:
        return kernel
    gate = gate_of(findings, _GATE_RULE.get(base.metric, ""), None)
    if gate is None:
        return kernel
    return kernel.model_copy(update={"baseline": as_judged(base, gate)})


def judged_group(group: GroupVerdict, findings: Sequence[Finding]) -> GroupVerdict:
    """``group`` with its percent-of-roof, MFU and time baselines in its findings' figures."""
    own = [f for f in findings if f.kernel == f"group:{group.name}"]
    base, mfu = group.baseline, group.mfu_baseline
    if base is not None:
        base = as_judged(base, gate_of(own, "roof-drop", "percent_of_roof"))
    if mfu is not None:
        mfu = as_judged(mfu, gate_of(own, "roof-drop", "mfu"))
    update: dict[str, BaselineSummary | float | None] = {"baseline": base, "mfu_baseline": mfu}
    timed = gate_of(own, "roof-drop", "time_s")  # a memory-bound group is judged on its time
    if base is not None and timed is not None and timed.level > 0:
        update["baseline"] = base.model_copy(update={"time_s": timed.level})
        update["time_ratio"] = group.time_s / timed.level
    return group.model_copy(update=update)


#: Which window a table's baseline shows (a footnote under the tables, in both formats).
BASELINE_NOTE = (
    "Baseline: with a finding, the level it was judged against ± the noise used, over the n "
    "runs since the last confirmed change (the finding's figures); without one, the median ± "
    "spread of the newest n baseline runs."
)


def shows_a_baseline(verdict: Verdict) -> bool:
    """Whether a kernel or group row states a baseline level: ``BASELINE_NOTE`` explains one.

    A first pull request's table has none (every kernel ``new``): no footnote then.
    """
    bases = [row.baseline for row in verdict.kernels] + [row.baseline for row in verdict.groups]
    return any(base is not None and base.center is not None for base in bases)


def lower_bound_legend(verdict: Verdict) -> str:
    """What ``≥`` before a percent of roof means, and why, when a kernel of the run has one.

    A V100's roof has no L2 or L1 bandwidth: every kernel read ``≥ 48.1%``, and only the
    verdict JSON's ``missing`` said why.
    """
    return lower_bound_text(
        m for k in verdict.kernels if k.percent_is_lower_bound for m in k.missing
    )


def lower_bound_text(reasons: Iterable[str]) -> str:
    """The ``≥`` legend naming the first three distinct ``reasons`` ("" when there are none).

    ``check``'s verdict and ``inspect``'s table say it alike.
    """
    why = dict.fromkeys(reasons)
    if not why:
        return ""
    return (
        "≥ before a percent of roof: a lower bound, the roof times part of the work only "
        f"({'; '.join(list(why)[:3])})."
    )
