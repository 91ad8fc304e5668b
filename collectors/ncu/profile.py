"""What a launch says beside its work: the clocks it ran at and the figures that explain a change.

The clocks scale a datasheet roof to the report's clocks (rules/README.md, "Clocks"); the
profile figures (launch configuration, occupancy, cache hit rates, warp stall reasons) are
what a regressed kernel's finding compares with its baseline's. Both are kept per kernel as
the time-weighted mean over the launches that recorded them, under the names ncu gives them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from collectors.ncu.peaks import DRAM_CLOCK, SM_CLOCKS

#: The extras' names for the two clocks (the profile figures keep their metric names).
SM_CLOCK = "clock.sm"
MEMORY_CLOCK = "clock.memory"

#: Launch configuration, occupancy and cache hit rates, as ncu names them.
PROFILE_METRICS = frozenset(
    {
        "launch__grid_size",
        "launch__block_size",
        "launch__registers_per_thread",
        "launch__shared_mem_per_block_static",
        "launch__shared_mem_per_block_dynamic",
        "sm__maximum_warps_per_active_cycle_pct",
        "sm__warps_active.avg.pct_of_peak_sustained_active",
        "l1tex__t_sector_hit_rate.pct",
        "lts__t_sector_hit_rate.pct",
    }
)
#: Warp stall reasons: cycles per issued instruction (the Warp State section; older ncu
#: names them ``average_warp_latency``), or PC-sampling counts (the Source Counters section).
STALL = re.compile(
    r"^smsp__(?:average_warps?(?:_latency)?_issue_stalled_([a-z_]+?)(?:_per_issue_active)?\.ratio"
    r"|pcsamp_warps_issue_stalled_([a-z_]+))$"
)


def is_profile(name: str) -> bool:
    """Whether ``name`` is a profile figure the collector keeps."""
    if name in PROFILE_METRICS:
        return True
    found = STALL.match(name)
    return found is not None and not name.endswith("_not_issued")


def stall_reason(name: str) -> str | None:
    """The stall reason a stall metric counts (``long_scoreboard``), None for other names."""
    found = STALL.match(name)
    if found is None or name.endswith("_not_issued"):
        return None
    return found.group(1) or found.group(2)


def extra_metrics(names: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """(extra name, metric) pairs a launch with metrics ``names`` has: clocks, then profile."""
    present = frozenset(names)
    extras: list[tuple[str, str]] = []
    sm = next((n for n in SM_CLOCKS if n in present), None)
    if sm is not None:
        extras.append((SM_CLOCK, sm))
    if DRAM_CLOCK in present:
        extras.append((MEMORY_CLOCK, DRAM_CLOCK))
    extras += [(n, n) for n in sorted(present) if is_profile(n)]
    return tuple(extras)
