"""Place every kernel of a run on a roof (the bridge from records to the roofline maths)."""

from __future__ import annotations

from collections.abc import Mapping

from collectors.schema import KernelRecord, RunRecord
from rules.roofline import DEFAULT_BORDERLINE_BAND, Placement, Roof, place


def place_kernel(
    kernel: KernelRecord,
    roof: Roof,
    *,
    band: float = DEFAULT_BORDERLINE_BAND,
    prefer_declared: bool = False,
) -> Placement:
    """Place one kernel: measured counts, else its declared work model."""
    flops, nbytes = kernel.work(prefer_declared=prefer_declared)
    return place(flops, nbytes, kernel.duration_s or None, roof, band=band)


def place_run(
    run: RunRecord,
    roof: Roof,
    *,
    band: float = DEFAULT_BORDERLINE_BAND,
    prefer_declared: bool = False,
) -> Mapping[str, Placement]:
    """Placement of every kernel of ``run``, by identity key."""
    return {
        k.key: place_kernel(k, roof, band=band, prefer_declared=prefer_declared)
        for k in run.kernels
    }
