"""The roofline decision procedure (rules/README.md): which class of fix applies to a kernel."""

from __future__ import annotations

from enum import StrEnum

from rules.roofline import COMPUTE_BOUND, MEMORY_BOUND, Placement

#: Percent of roof from which a kernel counts as "at the roof".
NEAR_ROOF_PERCENT = 80.0


class Advice(StrEnum):
    """Advice classes, from the roofline decision procedure."""

    CHANGE_ALGORITHM = "change-algorithm"
    CUT_BYTES = "cut-bytes"
    MEMORY_ACCESS = "memory-access"
    COMPUTE_EFFICIENCY = "compute-efficiency"
    MEASURE_MORE = "measure-more"
    CHECK_ROOF = "check-roof"


ADVICE_TEXT: dict[Advice, str] = {
    Advice.CHANGE_ALGORITHM: "Near the compute roof: only a different algorithm, precision or "
    "hardware goes faster.",
    Advice.CUT_BYTES: "At the memory roof: cut bytes moved (fusion, quantisation, reuse).",
    Advice.MEMORY_ACCESS: "Memory-bound far below the roof: fix access patterns, layout, "
    "coalescing and vectorised loads.",
    Advice.COMPUTE_EFFICIENCY: "Compute-bound far below the roof: use tensor cores, better "
    "tiling, more ILP and occupancy.",
    Advice.MEASURE_MORE: "Not enough counters to place the kernel: collect FLOP and byte "
    "metrics (ncu --set roofline) or declare a work model.",
    Advice.CHECK_ROOF: "Faster than the roof allows: the roof or the count is wrong for this "
    "kernel. Check the device's peaks and clocks (ncu --clock-control base), cache control "
    "(ncu --cache-control all) and the FLOP and byte counts.",
}


def advice_for(
    placement: Placement,
    near_roof_percent: float = NEAR_ROOF_PERCENT,
    like_for_like: float | None = None,
) -> Advice:
    """The advice class for a placed kernel.

    ``like_for_like``: its percent of the roof its baseline was bound by, when that differs.
    A GEMM that fell off the tensor cores sits at 80% of the fp32 roof and 5% of the
    tensor_bf16 one: it is far from the roof that matters, so the advice is to use the tensor
    cores again (compute efficiency), not "near the roof: change the algorithm".
    """
    pct = placement.percent_of_roof
    if pct is None or placement.regime is None:
        return Advice.MEASURE_MORE
    near = min(pct, like_for_like if like_for_like is not None else pct) >= near_roof_percent
    if placement.regime == MEMORY_BOUND:
        return Advice.CUT_BYTES if near else Advice.MEMORY_ACCESS
    assert placement.regime == COMPUTE_BOUND
    return Advice.CHANGE_ALGORITHM if near else Advice.COMPUTE_EFFICIENCY
