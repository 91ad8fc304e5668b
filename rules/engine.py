"""The engine: run the selected rules on a context and build the run's ``Verdict``.

It works in three passes over a context nothing writes to. The gate's pass judges what the
rules ask the gate to judge (``Rule.gate_batches``) into one ``GateDecisions``; every rule
then checks with it (``Rule.check``); the verdict's rows are built from the findings and the
same decisions. So no rule depends on another having run first.

A rule that crashes does not crash the check: its exception is wrapped in
``RuleExecutionFailed`` and reported as a finding of that rule at the rule's own severity.
A gate that cannot judge fails closed: a crashed ``fail`` rule (roof-drop, time-regression)
fails the check instead of passing it with a warning while a regression goes unjudged.
Preview rules are reported but never change the conclusion. On an untrusted runner (failed
health preflight) the rules that compare with the baseline are not run, and the verdict says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from rules.acrossdevices import across_devices, device_fields
from rules.advice import advice_for
from rules.base import Rule
from rules.collection import paused_collection
from rules.config import FailOn
from rules.context import RuleContext
from rules.errors import RuleExecutionFailed
from rules.gated import GateDecisions, decide
from rules.groups import unmatched_notes
from rules.groupverdict import group_verdict
from rules.kernelbaselines import kernel_baselines
from rules.kernelrows import findings_by_kernel, missing_verdicts, row_baseline, summarised_row
from rules.levelstore import LevelCache, StoredLevels
from rules.registry import SelectedRule, is_ignored, selected_rules
from rules.stats import Level
from rules.timing import (
    ratio,
    run_baseline,
    time_fields,
)
from rules.trusted import trusted
from rules.unjudged import min_runs, needed_by_gate, unjudged_are_new
from rules.verdict import (
    BaselineSummary,
    Conclusion,
    Finding,
    GroupVerdict,
    KernelStatus,
    KernelVerdict,
    Severity,
    Verdict,
)

#: Kernel statuses set by findings, strongest first (``Rule.statuses`` says which rule sets
#: which).
FINDING_STATUSES = (KernelStatus.REGRESSED, KernelStatus.SUSPECT)
UNTRUSTED_NOTE = (
    "The runner failed its health preflight: no regression verdict for this run "
    "(rules that compare with the baseline were not run)."
)


def _crashed(rule: type[Rule], exc: Exception) -> Finding:
    """The finding that stands for a crashed rule, at the rule's own severity."""
    failure = RuleExecutionFailed(rule.id, None, exc)
    return Finding(
        rule=rule.id,
        kernel=failure.kernel,
        severity=rule.default_severity,
        stability=rule.stability,
        message=f"rule {rule.id} crashed, so nothing it judges is known: {failure.cause!r}",
        numbers={"error": type(failure.cause).__name__},
    )


def gate_pass(
    ctx: RuleContext, rules: Sequence[SelectedRule], levels: LevelCache | None
) -> tuple[GateDecisions, dict[str, Finding]]:
    """The gate's decisions on what every rule asks it to judge, before any rule checks.

    A rule whose batches could not be judged (its code or the gate crashed, or it asked for a
    metric another rule has judged) gets its crash finding instead, by rule id.
    """
    decisions, crashed = GateDecisions(), {}
    for selected in rules:
        try:
            batches = selected.rule().gate_batches(ctx, selected.options)
            decisions = decisions.adding(selected.rule.id, decide(ctx, batches, levels))
        except Exception as exc:  # any rule bug must still leave a verdict
            crashed[selected.rule.id] = _crashed(selected.rule, exc)
    return decisions, crashed


def run_rule(selected: SelectedRule, ctx: RuleContext, gate: GateDecisions) -> list[Finding]:
    """Findings of one rule; a crash becomes one finding instead of an exception."""
    try:
        return list(selected.rule().check(ctx, selected.options, gate))
    except Exception as exc:  # any rule bug must still leave a verdict
        return [_crashed(selected.rule, exc)]


def _sort_key(finding: Finding) -> tuple[int, int, str, str]:
    return (finding.severity.rank, 0 if finding.counts else 1, finding.rule, finding.kernel or "")


def conclude(findings: Iterable[Finding], fail_on: FailOn) -> Conclusion:
    """The conclusion under the failure policy; preview findings never count."""
    severities = {f.severity for f in findings if f.counts}
    has_fail = Severity.FAIL in severities
    has_warn = Severity.WARN in severities
    if fail_on == "never":
        return Conclusion.WARN if (has_fail or has_warn) else Conclusion.PASS
    if has_fail or (fail_on == "warn" and has_warn):
        return Conclusion.FAIL
    return Conclusion.WARN if has_warn else Conclusion.PASS


def _status(key: str, findings: Sequence[Finding], baseline_n: int, improved: bool) -> KernelStatus:
    if baseline_n == 0:
        return KernelStatus.NEW
    return _finding_status(key, findings, improved)


def _finding_status(key: str, findings: Sequence[Finding], improved: bool) -> KernelStatus:
    """The status ``findings`` give ``key`` (the strongest), else improved or unchanged."""
    if not findings:  # most kernels of a run
        return KernelStatus.IMPROVED if improved else KernelStatus.UNCHANGED
    set_by_findings = {
        f.status for f in findings if f.kernel == key and f.severity != Severity.INFO
    }
    for status in FINDING_STATUSES:
        if status in set_by_findings:
            return status
    improved = improved or KernelStatus.IMPROVED in set_by_findings  # e.g. a fusion restored
    return KernelStatus.IMPROVED if improved else KernelStatus.UNCHANGED


def kernel_verdict(
    ctx: RuleContext,
    key: str,
    findings: Sequence[Finding],
    gate: GateDecisions,
    summarised: Mapping[str, BaselineSummary] | None = None,
) -> KernelVerdict:
    """One kernel's row from its ``findings`` (``summarised``: ``rules.kernelbaselines``)."""
    kernel, placement = ctx.kernels[key], ctx.placements[key]
    timed_only = placement.percent_of_roof is None
    metric = "time_s" if timed_only else "percent_of_roof"
    like_for_like = None if timed_only else ctx.like_for_like[key]
    current = kernel.duration_s if timed_only else like_for_like
    summary, improved = summarised_row(summarised, gate, metric, key) or row_baseline(
        ctx, gate, key, metric, current
    )
    status = _status(key, findings, summary.n, improved)
    if timed_only and status == KernelStatus.UNCHANGED and not kernel.duration_s:
        status = KernelStatus.UNPLACED
    fields = _row_fields(ctx, key, summary, status, _measurements(ctx, key, timed_only))
    return KernelVerdict(
        **fields, **(time_fields(placement, summary, like_for_like) | device_fields(ctx, key))
    )


def _row_fields(
    ctx: RuleContext,
    key: str,
    summary: BaselineSummary,
    status: KernelStatus,
    measurements: tuple[float, ...],
) -> dict[str, object]:
    """The fields of ``key``'s row that its placement, baseline and status give."""
    kernel, placement, config = ctx.kernels[key], ctx.placements[key], ctx.config
    group = config.group_of(key, kernel.name, kernel.nvtx_range) if config.groups else None
    total = ctx.total_time_s
    return {
        "key": key,
        "name": kernel.name,
        "group": group.name if group else None,
        "time_s": kernel.duration_s,
        "time_share": kernel.duration_s / total if total else 0.0,
        "percent_of_roof": placement.percent_of_roof,
        "regime": placement.regime,
        "borderline": placement.borderline,
        "binding": placement.binding,
        "intensity": dict(placement.intensity),
        "t_roof_s": placement.t_roof_s,
        "roof": ctx.roof.label,
        "advice": advice_for(placement, config.near_roof_percent, ctx.like_for_like.get(key)),
        "status": status,
        "baseline": summary if summary.n else None,
        "measurements": measurements,
    }


def kernel_verdicts(
    ctx: RuleContext,
    findings: Sequence[Finding],
    gate: GateDecisions,
    summarised: Mapping[str, BaselineSummary],
) -> list[KernelVerdict]:
    """Every kernel's row (``kernel_verdict``).

    A kernel summarised with the others (``rules.kernelbaselines``: placed, judged by the
    gate on its own card) with no re-measurement takes the row ``kernel_verdict`` makes of
    it, the same fields (``_row_fields``), set rather than validated (``rules.trusted``),
    without its per-kernel look-ups of the baseline; any other goes through it.
    """
    of_kernel, decided = findings_by_kernel(findings), gate.of("percent_of_roof")
    rows = []
    for key in ctx.kernels:
        summary = summarised.get(key)
        if summary is None or ctx.reruns:
            rows.append(kernel_verdict(ctx, key, of_kernel.get(key, ()), gate, summarised))
            continue
        placement, decision = ctx.placements[key], decided.get(key)
        improved = decision is not None and decision.judgement.improved
        status = _status(key, of_kernel.get(key, ()), summary.n, improved)
        measured = (float(cast(float, placement.percent_of_roof)),)
        fields = _row_fields(ctx, key, summary, status, measured)
        like = time_fields(placement, summary, ctx.like_for_like[key])
        rows.append(trusted(KernelVerdict, fields | like))
    return rows


def _measurements(ctx: RuleContext, key: str, timed_only: bool) -> tuple[float, ...]:
    """The run's value of ``key`` and each re-measurement's (the judged metric)."""
    if timed_only:
        runs = (ctx.run, *ctx.reruns)
        return tuple(k.duration_s for run in runs for k in run.kernels if k.key == key)
    if not ctx.reruns:  # the run's own value alone, the usual case
        percent = ctx.placements[key].percent_of_roof
        return () if percent is None else (float(percent),)
    placed = [ctx.placements[key], *(p[key] for p in ctx.rerun_placements if key in p)]
    return tuple(float(p.percent_of_roof) for p in placed if p.percent_of_roof is not None)


def _worst_first(kernels: list[KernelVerdict], findings: Sequence[Finding]) -> list[KernelVerdict]:
    rank: dict[str, int] = {}
    for f in findings:
        if f.kernel is not None:
            rank[f.kernel] = min(rank.get(f.kernel, 3), f.severity.rank)
    return sorted(kernels, key=lambda k: (rank.get(k.key, 3), -k.time_share, k.key))


def runnable_rules(ctx: RuleContext) -> list[SelectedRule]:
    """The selected rules, without those comparing with the baseline on an untrusted runner."""
    rules = selected_rules(ctx.config)
    return [s for s in rules if ctx.trusted or not s.rule.compares_to_baseline]


def _findings(
    ctx: RuleContext,
    rules: Sequence[SelectedRule],
    gate: GateDecisions,
    crashed: dict[str, Finding],
) -> list[Finding]:
    found: list[Finding] = []
    for selected in rules:
        crash = crashed.get(selected.rule.id)
        for finding in [crash] if crash else run_rule(selected, ctx, gate):
            kernel = ctx.kernels.get(finding.kernel or "")
            name = kernel.name if kernel else finding.kernel_name
            if finding.kernel and is_ignored(selected.rule, finding.kernel, name, ctx.config):
                continue
            found.append(finding)
    return sorted(found, key=_sort_key)


def with_findings(verdict: Verdict, findings: Sequence[Finding], fail_on: FailOn) -> Verdict:
    """``verdict`` as ``findings`` judge it: its conclusion, kernel statuses and order.

    For a verdict whose findings are stored ones (a run checked again): what the findings
    say (regressed, suspect) is theirs; what they cannot say (new, unplaced, missing, an
    improvement) stays as judged now.
    """
    of_kernel = findings_by_kernel(findings)
    kernels = [_restated(k, of_kernel.get(k.key, ())) for k in verdict.kernels]
    return verdict.model_copy(
        update={
            "findings": tuple(findings),
            "conclusion": conclude(findings, fail_on),
            "kernels": tuple(_worst_first(kernels, findings)),
        }
    )


def _restated(kernel: KernelVerdict, findings: Sequence[Finding]) -> KernelVerdict:
    if kernel.status not in (*FINDING_STATUSES, KernelStatus.IMPROVED, KernelStatus.UNCHANGED):
        return kernel
    status = _finding_status(kernel.key, findings, kernel.status == KernelStatus.IMPROVED)
    return kernel if status == kernel.status else kernel.model_copy(update={"status": status})


@dataclass(frozen=True)
class Evaluation:
    """What ``evaluate`` gives: the verdict, and the gate's levels for the caller to store.

    Attributes:
        verdict: The ``Verdict`` on the run.
        levels_to_store: The base-branch levels the gate computed that are worth storing, by
            digest (``rules.levelstore``); empty when the context keeps no levels.
    """

    verdict: Verdict
    levels_to_store: Mapping[str, Level]


def _levels(stored: StoredLevels | None) -> LevelCache | None:
    return None if stored is None else LevelCache.starting_from(stored)


def evaluate(ctx: RuleContext) -> Evaluation:
    """Judge ``ctx.run`` against its roof and baseline with the configured rules.

    The gate's pass first (every rule's ``gate_batches``, judged into one ``GateDecisions``),
    then every rule's ``check``, then the verdict's rows from the findings and the decisions.

    Returns:
        The ``Verdict`` (kernels and findings worst first, the groups, and the conclusion
        under ``ctx.config.fail_on``) and the levels the gate computed, for the caller to
        store.
    """
    with paused_collection():  # tens of acyclic objects per kernel (rules.collection)
        rules, levels = runnable_rules(ctx), _levels(ctx.stored_levels)
        gate, crashed = gate_pass(ctx, rules, levels)
        findings = _findings(ctx, rules, gate, crashed)
        kernels = kernel_verdicts(ctx, findings, gate, kernel_baselines(ctx, gate))
        kernels += missing_verdicts(ctx, findings)
        groups = tuple(group_verdict(ctx, figures, gate) for figures in ctx.groups.values())
        verdict = _verdict(ctx, findings, kernels, groups, min_runs(rules))
        verdict = unjudged_are_new(across_devices(ctx, verdict), gate)
        verdict = needed_by_gate(verdict, gate, rules)
    return Evaluation(verdict, {} if levels is None else dict(levels.fresh))


def _verdict(
    ctx: RuleContext,
    findings: Sequence[Finding],
    kernels: list[KernelVerdict],
    groups: tuple[GroupVerdict, ...],
    needed: int,
) -> Verdict:
    run = ctx.run
    run_base = run_baseline(ctx.comparable_history, ctx.config)
    run_base = run_base.model_copy(update={"min_runs": needed})
    return Verdict(
        conclusion=conclude(findings, ctx.config.fail_on),
        repo=run.repo,
        commit=run.commit,
        pull_request=run.pull_request,
        device=ctx.roof.device,
        roof=ctx.roof.label,
        roofs=(ctx.roof.label, *(r.label for r in ctx.other_roofs)),
        trusted=ctx.trusted,
        kernels=tuple(_worst_first(kernels, findings)),
        findings=tuple(findings),
        notes=(*run.notes, *(() if ctx.trusted else (UNTRUSTED_NOTE,)), *_group_notes(ctx)),
        groups=groups,
        time_s=ctx.total_time_s,
        baseline=run_base,
        time_ratio=ratio(ctx.total_time_s, run_base.time_s if run_base else None),
    )


def _group_notes(ctx: RuleContext) -> list[str]:
    """``rules.groups.unmatched_notes`` of the groups the run's kernels left empty."""
    return unmatched_notes(ctx, {name: g.keys for name, g in ctx.groups.items()})
