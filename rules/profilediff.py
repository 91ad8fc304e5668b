"""The why from the profiler: what moved between a regressed kernel and its baseline run.

Percent of roof says a kernel got slower against its ceiling; the profiler usually says why:
more registers per thread (fewer warps fit), a smaller grid, a cache that stopped hitting, a
new dominant stall. For a kernel with profiler figures on both sides (``KernelRecord.profile``)
the figures that moved most are put in words (``registers 96 -> 168: occupancy 50% -> 25%``)
on the kernel's worst finding. Movement is scored on one scale: a doubling of a count or a
size is 1, as are 25 points of a percentage; changes below ``MIN_SCORE`` are noise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from collectors.schema import KernelRecord, RunRecord
from rules.verdict import Finding, Severity, Verdict

#: How many movers a finding names.
MOVERS = 4
#: Smallest movement named: 5 points of a percentage, or 10% of a count or a size.
MIN_PERCENT_POINTS = 5.0
MIN_RATIO_SCORE = math.log2(1.1)
#: Launch configuration: metric, words, unit ("B" takes an SI prefix), what follows.
CONFIG = (
    ("launch__registers_per_thread", "registers", "", ""),
    ("shared", "shared memory", "B", " per block"),
    ("launch__block_size", "block", "", " threads"),
    ("launch__grid_size", "grid", "", " blocks"),
)
#: Figures that limit occupancy: named with it when both moved.
OCCUPANCY_CAUSES = frozenset({"registers", "shared memory", "block"})
PERCENTS = (
    ("sm__maximum_warps_per_active_cycle_pct", "occupancy"),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "achieved occupancy"),
    ("l1tex__t_sector_hit_rate.pct", "L1 hit rate"),
    ("lts__t_sector_hit_rate.pct", "L2 hit rate"),
)
SHARED = ("launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic")
_STALL_FAMILIES = (
    ("smsp__average_warps_issue_stalled_", "_per_issue_active.ratio"),
    ("smsp__average_warp_latency_issue_stalled_", ".ratio"),
    ("smsp__pcsamp_warps_issue_stalled_", ""),
)
#: "selected" is the warp that issued: no stall.
_NOT_STALLS = frozenset({"selected"})


@dataclass(frozen=True)
class Mover:
    """One figure that moved: its words, and how far on the common scale."""

    label: str
    text: str
    score: float


def _amount(value: float, unit: str) -> str:
    """``168``, ``1024``, ``49.2 kB``: bytes take an SI prefix, counts are shown whole."""
    if unit != "B":
        return f"{value:.6g}"
    size, prefix = next(((s, p) for s, p in _PREFIXES if value >= s), (1.0, ""))
    return f"{value / size:.3g} {prefix}B"


_PREFIXES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def _ratio_mover(label: str, before: float, after: float, unit: str, then: str) -> Mover | None:
    if before == after or (before <= 0 and after <= 0):
        return None
    score = 1.0 if min(before, after) <= 0 else abs(math.log2(after / before))
    text = f"{label} {_amount(before, unit)} -> {_amount(after, unit)}{then}"
    return Mover(label, text, score)


def _percent_mover(label: str, before: float, after: float, suffix: str = "") -> Mover | None:
    if abs(after - before) < MIN_PERCENT_POINTS:
        return None
    return Mover(label, f"{label} {before:.0f}% -> {after:.0f}%{suffix}", abs(after - before) / 25)


def _config(profile: Mapping[str, float]) -> dict[str, float]:
    figures = dict(profile)
    if all(name in profile for name in SHARED):
        figures["shared"] = sum(profile[name] for name in SHARED)
    return figures


def stall_shares(profile: Mapping[str, float], family: tuple[str, str]) -> dict[str, float]:
    """Each stall reason's percent of all stalls in one metric family (empty when it has none)."""
    head, tail = family
    values = {
        name[len(head) : len(name) - len(tail)]: value
        for name, value in profile.items()
        if name.startswith(head) and name.endswith(tail) and not name.endswith("_not_issued")
    }
    values = {reason: v for reason, v in values.items() if reason not in _NOT_STALLS}
    total = sum(values.values())
    return {reason: 100 * v / total for reason, v in values.items()} if total > 0 else {}


def _stall_movers(before: Mapping[str, float], after: Mapping[str, float]) -> list[Mover]:
    for family in _STALL_FAMILIES:
        old, new = stall_shares(before, family), stall_shares(after, family)
        if old and new:
            moved = (
                _percent_mover(f"{r.replace('_', ' ')} stalls", old.get(r, 0.0), new.get(r, 0.0))
                for r in sorted(set(old) | set(new))
            )
            return sorted((m for m in moved if m is not None), key=lambda m: -m.score)[:2]
    return []


def _bytes_movers(before: KernelRecord, after: KernelRecord) -> list[Mover]:
    movers = []
    for tier in ("dram", "l2", "l1"):
        if tier in before.bytes and tier in after.bytes and before.launches and after.launches:
            old, new = before.bytes[tier] / before.launches, after.bytes[tier] / after.launches
            found = _ratio_mover(f"{tier.upper()} bytes", old, new, "B", " per launch")
            if found is not None and found.score >= MIN_RATIO_SCORE:
                movers.append(found)
    return movers


def _merge_occupancy(movers: list[Mover]) -> list[Mover]:
    """``registers 96 -> 168: occupancy 50% -> 25%``: the cause beside what it limits."""
    occupancy = next((m for m in movers if m.label == "occupancy"), None)
    causes = [m for m in movers if m.label in OCCUPANCY_CAUSES]
    if occupancy is None or not causes:
        return movers
    cause = max(causes, key=lambda m: m.score)
    merged = Mover(
        cause.label, f"{cause.text}: {occupancy.text}", max(cause.score, occupancy.score)
    )
    return [merged if m is cause else m for m in movers if m is not occupancy]


def profile_changes(
    before: KernelRecord, after: KernelRecord, limit: int = MOVERS
) -> tuple[str, ...]:
    """The figures that moved most from ``before`` (the baseline's) to ``after``, in words.

    Empty unless both records carry profiler figures.
    """
    if not before.profile or not after.profile:
        return ()
    old, new = _config(before.profile), _config(after.profile)
    movers: list[Mover] = []
    for name, label, unit, then in CONFIG:
        if name in old and name in new:
            found = _ratio_mover(label, old[name], new[name], unit, then)
            movers += [found] if found is not None else []
    for name, label in PERCENTS:
        if name in old and name in new:
            found = _percent_mover(label, old[name], new[name])
            movers += [found] if found is not None else []
    movers += _stall_movers(old, new) + _bytes_movers(before, after)
    ranked = sorted(_merge_occupancy(movers), key=lambda m: -m.score)
    return tuple(m.text for m in ranked[:limit])


def with_profile_changes(
    verdict: Verdict, run: RunRecord, baseline: Mapping[str, KernelRecord]
) -> Verdict:
    """``verdict`` with each failing or warned kernel's worst finding naming what moved.

    Args:
        verdict: The judged run's verdict (findings worst first).
        run: The judged run.
        baseline: The baseline run's record of each kernel, by identity key.
    """
    done: set[str] = set()
    findings: list[Finding] = []
    measured: dict[str, KernelRecord] = {}
    for kernel in run.kernels:  # the first of a key, as a search of the run would find
        measured.setdefault(kernel.key, kernel)
    for finding in verdict.findings:
        key = finding.kernel
        if key is None or key in done or finding.severity == Severity.INFO or key not in baseline:
            findings.append(finding)
            continue
        done.add(key)
        now = measured.get(key)
        changes = profile_changes(baseline[key], now) if now is not None else ()
        findings.append(finding.model_copy(update={"profile": changes}) if changes else finding)
    return verdict.model_copy(update={"findings": tuple(findings)})
