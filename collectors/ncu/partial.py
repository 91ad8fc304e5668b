"""Figures a kernel had in only some of its launches: left out of it, and said at run level.

A launch may lack a metric its kernel's other launches have: an ``n/a`` cell, a metric row
the launch does not print, a value a ``.ncu-rep`` holds as NaN. (The CSV readers refuse a
``nan`` cell beside a measured duration: ncu writes NaN only where a replay failed, and then
for the duration too.) A sum over the other launches would understate the kernel's work, so
the figure is left out (the kernel's ``missing`` says so); the run's note names the kernels,
since the verdict and ``inspect`` show run notes, not each kernel's ``missing``.
"""

from __future__ import annotations

from collections.abc import Sequence

from collectors.errors import cut
from collectors.schema import KernelRecord

_LEFT_OUT = " launches, left out"


def partial_text(figure: str, present: int, launches: int) -> str:
    """A kernel's ``missing`` entry: ``bytes.dram: present in 1 of 2 launches, left out``."""
    return f"{figure}: present in {present} of {launches}{_LEFT_OUT}"


def partial_note(kernels: Sequence[KernelRecord]) -> list[str]:
    """One run note naming the kernels (up to 3) and figures left out that way."""
    found = [
        f"{cut(k.name)} ({entry.split(': present in ')[0]}, in {_count(entry)})"
        for k in kernels
        for entry in k.missing
        if entry.endswith(_LEFT_OUT)
    ]
    if not found:
        return []
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    return [
        f"{len(found)} figure(s) missing from some launches of a kernel (a failed metric "
        f"replay writes nan), left out of those kernels: {'; '.join(found[:3])}{more}"
    ]


def _count(entry: str) -> str:
    """``present in 1 of 2 launches, left out`` -> ``1 of 2 launches``."""
    return entry.split(": present in ")[1].removesuffix(", left out")
