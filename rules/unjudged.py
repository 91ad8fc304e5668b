"""A run judged against fewer baseline runs than the gate needs: nothing judged, all new.

The gate judges a kernel from ``min_runs`` baseline runs (``[baseline] min_runs``, 3). A
PR on a repository's second night used to read "All 60 kernels unchanged" with a kernel 3x
slower: the verdict now records what it needed (``RunBaseline.min_runs``), says so in its
headline (``Verdict.judged_nothing``) and lists its kernels as new, with their short
baselines and changes. So is a kernel of a longer baseline with fewer runs of its own; one
far worse than every run it has is early-slowdown's suspect instead, a warning.
When the gate judged no kernel for too few runs, the verdict records the runs it needed
(``needed_by_gate``), so it says "not judged" rather than passing.
"""

from __future__ import annotations

from collections.abc import Sequence

from rules.gated import GateDecisions
from rules.registry import SelectedRule
from rules.verdict import KernelStatus, KernelVerdict, Verdict


def min_runs(rules: Sequence[SelectedRule]) -> int:
    """The baseline runs the gate needs before any baseline rule judges a kernel."""
    needed = [int(getattr(s.options, "min_runs", 1)) for s in rules if s.rule.compares_to_baseline]
    return min(needed, default=0)


def unjudged_are_new(verdict: Verdict, gate: GateDecisions) -> Verdict:
    """The kernels the gate could not judge for too few baseline runs are new, not unchanged.

    With fewer runs than the gate needs in the run's baseline, every kernel; in a longer one,
    each kernel whose own history was too short for the gate (one added a night ago). Each
    keeps its short baseline and change.
    """
    whole = verdict.judged_nothing and verdict.baseline_runs > 0
    unjudged = [
        i
        for i, k in enumerate(verdict.kernels)
        if k.status == KernelStatus.UNCHANGED and (whole or _not_judged(k, gate))
    ]
    if not unjudged:
        return verdict
    kernels = list(verdict.kernels)
    for i in unjudged:
        kernels[i] = kernels[i].model_copy(update={"status": KernelStatus.NEW})
    return verdict.model_copy(update={"kernels": tuple(kernels)})


def _not_judged(kernel: KernelVerdict, gate: GateDecisions) -> bool:
    """Whether the gate had a baseline for ``kernel`` but too little of it to judge."""
    base = kernel.baseline
    decision = gate.get(base.metric, kernel.key) if base is not None else None
    return decision is not None and not decision.judgement.enough


def _unjudged_row(kernel: KernelVerdict, gate: GateDecisions) -> bool:
    """New or missing, or a suspect the gate did not judge (early-slowdown's warning)."""
    if kernel.status in (KernelStatus.NEW, KernelStatus.MISSING):
        return True
    return kernel.status == KernelStatus.SUSPECT and _not_judged(kernel, gate)


def needed_by_gate(verdict: Verdict, gate: GateDecisions, rules: Sequence[SelectedRule]) -> Verdict:
    """``verdict`` with its baseline's ``min_runs`` the gate's, when it judged no kernel for it.

    ``[rules.options.roof-drop] min_runs = 10`` over 8 runs left every kernel new and the
    verdict passed, its baseline needing 3 (the least of the rules'). When every kernel is
    new (or early-slowdown's suspect, far worse than its few runs) and no decision of the
    gate had enough runs, the runs needed are the least
    ``min_runs`` of the rules that decided: with fewer, the verdict judged nothing.
    """
    base, keys = verdict.baseline, {k.key for k in verdict.kernels}
    if base is None or not base.runs or verdict.judged_nothing:
        return verdict
    if not all(_unjudged_row(k, gate) for k in verdict.kernels):
        return verdict
    decided = [(m, d) for m in gate.by_metric for k, d in gate.of(m).items() if k in keys]
    if not decided or any(d.judgement.enough for _, d in decided):
        return verdict
    options = {s.rule.id: s.options for s in rules}
    needed = min(int(getattr(options.get(gate.judged_by[m]), "min_runs", 0)) for m, _ in decided)
    if needed <= base.min_runs:
        return verdict
    return verdict.model_copy(update={"baseline": base.model_copy(update={"min_runs": needed})})
