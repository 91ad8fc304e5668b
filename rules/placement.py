"""Place every kernel of a run on a roof (the bridge from records to the roofline maths)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from collectors.schema import LEFT_OUT_WORK, UNREAD_WORK, KernelRecord, RunRecord
from rules.clocks import kernel_roof
from rules.roofline import DEFAULT_BORDERLINE_BAND, Placement, Roof, place


def place_kernel(
    kernel: KernelRecord,
    roof: Roof,
    *,
    band: float = DEFAULT_BORDERLINE_BAND,
    prefer_declared: bool = False,
) -> Placement:
    """Place one kernel on ``roof`` (``rules.clocks.kernel_roof``): measured counts, else declared.

    The kernel's notes of work it did that is not counted lead the placement's ``missing``:
    they, not a roof's gaps, are why its percent is partial or its regime unknown.
    """
    flops, nbytes = kernel.work(prefer_declared=prefer_declared)
    own = kernel_roof(kernel, roof)  # a report that records no clock: the unscaled roof
    placed = place(flops, nbytes, kernel.duration_s or None, own, band=band)
    unread = tuple(why for why in kernel.missing if _uncounted_work(why))
    return dataclasses.replace(placed, missing=unread + placed.missing) if unread else placed


def _uncounted_work(why: str) -> bool:
    """Whether a kernel's ``missing`` entry is about work it did that is not counted."""
    return UNREAD_WORK in why or why.startswith(LEFT_OUT_WORK)


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


def percent_is_lower_bound(placement: Placement) -> bool:
    """Whether the percent of roof times part of the work only: ``≥`` before it, where shown.

    A kernel that counted no work has no percent, so it is no lower bound though its
    ``missing`` says why.
    """
    return placement.percent_of_roof is not None and bool(placement.missing)
