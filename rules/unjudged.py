"""A run judged against fewer baseline runs than the gate needs: nothing judged, all new.

The gate judges a kernel from ``min_runs`` baseline runs (``[baseline] min_runs``, 3). A
PR on a repository's second night used to read "All 60 kernels unchanged" with a kernel 3x
slower: the verdict now records what it needed (``RunBaseline.min_runs``), says so in its
headline (``Verdict.judged_nothing``) and lists its kernels as new, with their short
baselines and changes. So is a kernel of a longer baseline with fewer runs of its own.
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
