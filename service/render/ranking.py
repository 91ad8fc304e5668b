"""Which kernels a verdict lists, worst first: one order for the markdown and the terminal.

A kernel is listed when it has findings (a cleared suspect's aside) or its status is not
``unchanged``; the order is by its worst finding (counted before preview, then severity),
then by status (regressed, unplaced, new or missing, improved), then by share of GPU time.
Both renderers use it, so a kernel the comment shows near the top (an unplaced one, say) is
not cut from the terminal's table by its row limit.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from rules import Finding, KernelStatus, KernelVerdict, Verdict, is_cleared
from rules.stats import GateSettings
from service.render.verdict_view import worst

#: Kernel names the line of cleared suspects shows; the rest are counted.
CLEARED_NAMES = 10

_STATUS_ORDER = {
    KernelStatus.REGRESSED: 0,
    KernelStatus.UNPLACED: 1,
    KernelStatus.NEW: 2,
    KernelStatus.ACCEPTED: 2,
    KernelStatus.MISSING: 2,
    KernelStatus.IMPROVED: 3,
    KernelStatus.UNCHANGED: 4,
}


#: A kernel judged against too few baseline runs is still shown first when its value moved
#: this much from them: the gate's default fail-at-once effect, beyond any run-to-run noise.
FAR_OFF = GateSettings().fail_at_once_effect


def far_off_unjudged(kernel: KernelVerdict) -> bool:
    """Not judged (new) yet ``FAR_OFF`` from the few baseline runs it has: a reader's first look."""
    base = kernel.baseline
    change = base.relative_change if base is not None else None
    return kernel.status == KernelStatus.NEW and change is not None and abs(change) >= FAR_OFF


def importance(kernel: KernelVerdict, findings: Sequence[Finding]) -> tuple[int, int, int, float]:
    """The sort key of a kernel: lower is shown first."""
    top = worst(findings)
    if top is None:
        order = 0 if far_off_unjudged(kernel) else _STATUS_ORDER.get(kernel.status, 2)
        return (1, 3, order, -kernel.time_share)
    return (0 if top.counts else 1, top.severity.rank, 0, -kernel.time_share)


def findings_by_kernel(verdict: Verdict) -> dict[str, list[Finding]]:
    """The findings of each kernel of the verdict, by key (the others are not included)."""
    keys = {k.key for k in verdict.kernels}
    found: dict[str, list[Finding]] = defaultdict(list)
    for finding in verdict.findings:
        if finding.kernel in keys:
            found[finding.kernel].append(finding)
    return found


def ranked_kernels(verdict: Verdict) -> list[tuple[KernelVerdict, list[Finding]]]:
    """Every kernel with its findings, most important first."""
    found = findings_by_kernel(verdict)
    ranked = sorted(verdict.kernels, key=lambda k: importance(k, found.get(k.key, [])))
    return [(k, found.get(k.key, [])) for k in ranked]


def unplaced(kernel: KernelVerdict) -> bool:
    """A kernel of the run (not a missing one) that is on no roof."""
    return kernel.regime is None and kernel.status != KernelStatus.MISSING


def timed_alone(verdict: Verdict) -> bool:
    """Whether no kernel of the run is on a roof: a suite of benchmarks timed without work.

    A kernel without a roof is news beside placed ones (it lost its counters); in such a
    suite every kernel lacks one, and a row each says nothing the first says.
    """
    run = [k for k in verdict.kernels if k.status != KernelStatus.MISSING]
    return bool(run) and all(unplaced(k) for k in run)


def is_listed(kernel: KernelVerdict, findings: Sequence[Finding]) -> bool:
    """Whether the table lists the kernel (else it counts among the unchanged).

    A suspect its re-measurement cleared is unchanged: a re-measured 2,000-kernel PR clears
    a dozen, counted on one line (``cleared_line``), not a dozen rows of information.
    """
    asks = any(not is_cleared(f) for f in findings)
    return asks or kernel.status != KernelStatus.UNCHANGED


def cleared_line(verdict: Verdict, code: Callable[[str], str] = str) -> str:
    """``🔁 2 suspects cleared by re-measurement: `a`, `b`.`` (empty when none)."""
    names = [f.kernel_name or f.kernel or "" for f in verdict.findings if is_cleared(f)]
    if not names:
        return ""
    shown = ", ".join(code(n) for n in names[:CLEARED_NAMES])
    more = f" and {len(names) - CLEARED_NAMES} more" if len(names) > CLEARED_NAMES else ""
    s = "" if len(names) == 1 else "s"
    return f"🔁 {len(names)} suspect{s} cleared by re-measurement: {shown}{more}."
