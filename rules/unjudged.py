"""A run judged against fewer baseline runs than the gate needs: nothing judged, all new.

The gate judges a kernel from ``min_runs`` baseline runs (``[baseline] min_runs``, 3). A
PR on a repository's second night used to read "All 60 kernels unchanged" with a kernel 3x
slower: the verdict now records what it needed (``RunBaseline.min_runs``), says so in its
headline (``Verdict.judged_nothing``) and lists its kernels as new, with their short
baselines and changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from rules.registry import SelectedRule
from rules.verdict import KernelStatus, Verdict


def min_runs(rules: Sequence[SelectedRule]) -> int:
    """The baseline runs the gate needs before any baseline rule judges a kernel."""
    needed = [int(getattr(s.options, "min_runs", 1)) for s in rules if s.rule.compares_to_baseline]
    return min(needed, default=0)


def unjudged_are_new(verdict: Verdict) -> Verdict:
    """A run judged against too few baseline runs: its unchanged kernels are new (unjudged).

    With fewer runs than the gate needs no kernel was judged, so none is "unchanged": each
    is new, with its short baseline and change still shown.
    """
    if not verdict.judged_nothing or verdict.baseline_runs == 0:
        return verdict
    kernels = tuple(
        k.model_copy(update={"status": KernelStatus.NEW})
        if k.status == KernelStatus.UNCHANGED
        else k
        for k in verdict.kernels
    )
    return verdict.model_copy(update={"kernels": kernels})
