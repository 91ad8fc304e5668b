"""The run page's kernel rows: each kernel's share and time as the markdown verdict states them.

The page's template lays the rows out; their figures come from the helpers the PR comment and
the terminal use (``verdict_view``), each kernel's baseline in its gate finding's figures
(``judged``), so a run reads the same on the dashboard as in its comment: the page showed no
time at all, and a missing kernel's share as ``0.0 %`` where the comment says ``—``.
"""

from __future__ import annotations

from dataclasses import dataclass

from rules import KernelVerdict, Verdict
from service.render.judged import judged_kernel
from service.render.ranking import findings_by_kernel
from service.render.verdict_view import kernel_share, kernel_time


@dataclass(frozen=True)
class PageKernel:
    """A kernel of the run page: its verdict, share of GPU time and time (baseline → now)."""

    kernel: KernelVerdict
    share: str
    time: str


def page_kernels(verdict: Verdict, limit: int) -> list[PageKernel]:
    """The verdict's first ``limit`` kernels with the share and time cells the markdown shows."""
    found = findings_by_kernel(verdict)
    rows = []
    for kernel in verdict.kernels[:limit]:
        judged = judged_kernel(kernel, found.get(kernel.key, []))
        rows.append(PageKernel(kernel, kernel_share(kernel), kernel_time(judged)))
    return rows
