"""Which roof a kernel's figures are of, when it is bound otherwise than its baseline.

A kernel whose binding moved (a GEMM off the tensor cores, a fusion broken or restored) has
its percent of its own roof now, and, where it has work at the old binding and is not faster
off it (``rules.timing.faster_off_its_binding``), a like-for-like figure at the baseline's.
"""

from __future__ import annotations

from rules import KernelVerdict


def moved_from(kernel: KernelVerdict) -> str | None:
    """The baseline's binding when the kernel is now bound by another resource, else None."""
    base = kernel.baseline
    if base is None or base.binding is None or base.binding == kernel.binding:
        return None
    return base.binding


def rebound(kernel: KernelVerdict) -> str | None:
    """``moved_from`` when the kernel has a figure at the baseline's roof (like for like)."""
    if kernel.percent_of_baseline_roof == kernel.percent_of_roof:
        return None  # no work there, or faster off it (rules.timing): two roofs, no like
    return moved_from(kernel)


def across_roofs(kernel: KernelVerdict) -> bool:
    """Its percent and its baseline's are of two roofs, with no like-for-like figure."""
    return moved_from(kernel) is not None and rebound(kernel) is None
