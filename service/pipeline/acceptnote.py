"""A run whose changes a maintainer accepted (``/roofguard accept``) is judged again.

An acceptance restarts the kernel's baseline after it. The verdict stored at the run's first
check still held the accepted kernels' findings: posted again, the comment showed them as
new and failing at once, and the check run stayed red. A run with acceptances is judged
anew each time it is asked for (the same runs, so the same verdict): its accepted kernels
have no baseline left, and no finding (not even ``new-kernel``: a maintainer has read them);
they are ``accepted``, not new, and the verdict says who accepted what, and why.
"""

from __future__ import annotations

from collections import defaultdict

from rules import FailOn, KernelStatus, Verdict, with_findings
from service.store.baselines import Acceptance

#: Kernels named in the note of one acceptance; the rest are counted.
NAMED = 5


def accepted_verdict(verdict: Verdict, acceptances: list[Acceptance], fail_on: FailOn) -> Verdict:
    """``verdict`` without the findings of the accepted kernels, noting each acceptance."""
    keys = {a.kernel_key for a in acceptances}
    kept = [f for f in verdict.findings if f.kernel is None or f.kernel not in keys]
    judged = with_findings(verdict, kept, fail_on)
    kernels = tuple(
        k.model_copy(update={"status": KernelStatus.ACCEPTED}) if k.key in keys else k
        for k in judged.kernels
    )
    notes = (*verdict.notes, *accepted_notes(acceptances))
    return judged.model_copy(update={"kernels": kernels, "notes": notes})


def accepted_notes(acceptances: list[Acceptance]) -> tuple[str, ...]:
    """One note per acceptance comment: the kernels, who accepted them and why."""
    kernels: dict[tuple[str, str], list[str]] = defaultdict(list)
    for acceptance in acceptances:
        kernels[acceptance.accepted_by, acceptance.reason].append(acceptance.kernel_key)
    return tuple(
        f"judged again: {_names(keys)} accepted as the new baseline by {who}: {why}"
        for (who, why), keys in kernels.items()
    )


def _names(keys: list[str]) -> str:
    named = ", ".join(repr(k) for k in keys[:NAMED])
    more = len(keys) - NAMED
    return named + (f" and {more} more" if more > 0 else "")
