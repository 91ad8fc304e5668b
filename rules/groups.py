"""Kernel groups judged as a whole: time-weighted percent of roof and MFU, now and per baseline run.

For a group's placed kernels ``i`` (FLOPs ``F_ip``, times ``T_i``, speed-of-light ``T_roof,i``)::

    percent of roof = 100 * sum_i T_roof,i / sum_i T_i        (time-weighted)

with each ``T_roof,i`` on the roof kernel ``i``'s baseline was bound by (like for like, see
``rules.timing``), and

    MFU             = sum_i min(F_i / P_ref,i, sum_p F_ip / P_p,i) / sum_i T_i

with each kernel's peaks on the roof it was placed on (``rules.groupmfu``: a trace's kernels
beside an ncu report read against the datasheet roof as it is, not the one scaled to ncu's
clocks). MFU holds every run, now and each baseline run, to one reference precision, whose
peak is ``P_ref``: the precision the config declares for the group (``precision``), else the one
that did most of the baseline's FLOPs (its kernels' effective peaks ``F / sum_p F_p / P_p`` name
it), else the current run's. A kernel that ran at a slower precision reads against ``P_ref``, so
a GEMM that fell off the tensor cores reads as the drop it is (72% -> 5% of the bf16 peak), not
as a small change against the fp32 peak it fell onto; one that ran at a faster precision reads
against its own peak, so no run passes 100% (an fp8 GEMM is not 200% of the bf16 peak). The
precision is named only when no kernel read against a faster peak of its own; with no precision
to take, each kernel reads against its own peaks. The reference is never a blend of precisions:
one fp32 night among bf16 ones blended into a peak near tensor_tf32's, against which the bf16
nights read 142%.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import pandas as pd

from collectors.schema import KernelRecord
from rules.config import KernelGroup, RulesConfig
from rules.groupmfu import (
    KernelRoofs,
    Work,
    dominant_precision,
    faster_than,
    held_to,
    history_work,
    kernel_roofs,
)
from rules.history import KernelHistory
from rules.roofline import Placement, Roof
from rules.timing import like_for_like_percent

#: The gate's metric of a memory-bound group's total time (roof-drop judges it); the kernels'
#: ``time_s`` is time-regression's.
GROUP_TIME = "group_time_s"


class RunWithHistory(Protocol):
    """What a group's figures are computed from: the ``RuleContext`` that keeps them.

    ``RuleContext.groups`` computes them once; this module sits below the context, so it
    names only what it reads.
    """

    @property
    def config(self) -> RulesConfig: ...  # noqa: D102
    @property
    def roof(self) -> Roof: ...  # noqa: D102
    @property
    def kernels(self) -> Mapping[str, KernelRecord]: ...  # noqa: D102
    @property
    def placements(self) -> Mapping[str, Placement]: ...  # noqa: D102
    @property
    def comparable_history(self) -> pd.DataFrame: ...  # noqa: D102
    @property
    def gate_history(self) -> pd.DataFrame | None: ...  # noqa: D102
    @property
    def comparable_gate_history(self) -> pd.DataFrame: ...  # noqa: D102
    def kernel_history(self, key: str) -> KernelHistory: ...  # noqa: D102


@dataclass(frozen=True)
class GroupFigures:
    """A group's current figures and its per-run baseline series.

    Attributes:
        group: The configured group.
        keys: The current run's kernels in the group.
        time_s: Their total time.
        percent_of_roof: Time-weighted percent of roof (None when nothing is placed).
        mfu: Model FLOP utilisation against ``effective_peak``, 0-1 (None without FLOPs).
        effective_peak: The reference peak ``P_ref`` of MFU on the run's roof, FLOP/s (None
            when no kernel ran at one precision: each kernel then reads against its own
            peaks); a kernel placed on another roof reads against that roof's.
        history: One row per baseline run, oldest first: ``run_id``, ``commit``,
            ``timestamp``, ``percent_of_roof``, ``mfu``, ``time_s``.
        precision: The precision of ``effective_peak``, named when no kernel read against a
            faster peak of its own (None: a mix of precisions).
        gate_history: The same series over the gate's longer history (``gate_history`` of
            the context; None when it has none): what the group's gate judges.
    """

    group: KernelGroup
    keys: tuple[str, ...]
    time_s: float
    percent_of_roof: float | None
    mfu: float | None
    effective_peak: float | None
    history: pd.DataFrame
    precision: str | None = None
    gate_history: pd.DataFrame | None = None

    @property
    def key(self) -> str:
        """The key group findings use."""
        return f"group:{self.group.name}"

    @property
    def judged_history(self) -> pd.DataFrame:
        """The series the group's gate judges: ``gate_history``, else ``history``."""
        return self.history if self.gate_history is None else self.gate_history


def group_members(ctx: RunWithHistory) -> dict[str, tuple[str, ...]]:
    """Kernel keys per group name (a kernel belongs to its first matching group)."""
    members: dict[str, list[str]] = {g.name: [] for g in ctx.config.groups}
    for key, kernel in ctx.kernels.items():
        group = ctx.config.group_of(key, kernel.name, kernel.nvtx_range)
        if group is not None:
            members[group.name].append(key)
    return {name: tuple(keys) for name, keys in members.items()}


def unmatched_notes(ctx: RunWithHistory, members: Mapping[str, tuple[str, ...]]) -> list[str]:
    """A note per configured group no kernel of the run joined: its row reads 0 kernels.

    A case typo (``*S884GEMM*`` for ``s884gemm``) left a declared regime unchecked, silently;
    so did a group after a catch-all (``*``), which took every kernel first.
    """
    joined = {key: name for name, keys in members.items() for key in keys}
    notes: list[str] = []
    earlier: set[str] = set()
    for group in ctx.config.groups:
        if not members[group.name]:
            notes.append(_unmatched(group, ctx.kernels, joined, frozenset(earlier)))
        earlier.add(group.name)
    return notes


def _unmatched(
    group: KernelGroup,
    kernels: Mapping[str, KernelRecord],
    joined: Mapping[str, str],
    earlier: frozenset[str],
) -> str:
    """Why ``group`` has no kernel: earlier groups took them all, or none matches (case hint)."""
    nvtx = f" in NVTX range {group.nvtx!r}" if group.nvtx else ""
    where = f"pattern {group.pattern!r}{nvtx}"
    # Every kernel the group matches joined an earlier group: a kernel joins its first.
    taken = Counter(joined[k] for k, r in kernels.items() if group.matches(k, r.name, r.nvtx_range))
    if taken:
        n = sum(taken.values())
        return (
            f"group {group.name!r} has no kernel of this run: the {n} kernel{'s' * (n != 1)} "
            f"its {where} matches joined {_earlier(taken)} (a kernel joins only the first "
            f"group it matches; list {group.name!r} above {'it' if len(taken) == 1 else 'them'} "
            "to judge them on their own)"
        )
    folded = KernelGroup(name=group.name, pattern=group.pattern.lower(), nvtx=group.nvtx)
    # Only the kernels the group would take with its case fixed: not an earlier group's.
    near = sum(
        folded.matches(k.lower(), r.name.lower(), r.nvtx_range) and joined.get(k) not in earlier
        for k, r in kernels.items()
    )
    hint = f"; {near} would, ignoring case" if near else ""
    return (
        f"group {group.name!r} matches no kernel of this run ({where}, "
        f"a case-sensitive glob on each kernel's key and name{hint})"
    )


def _earlier(taken: Counter[str]) -> str:
    """The earlier groups that took a group's kernels: ``the earlier group 'all'``, or several."""
    if len(taken) == 1:
        return f"the earlier group {next(iter(taken))!r}"
    named = [f"{name!r} ({n})" for name, n in taken.most_common()]
    return f"the earlier groups {', '.join(named[:-1])} and {named[-1]}"


WORK = ["total_flops", "peak_flop_time_s"]


def _current(
    ctx: RunWithHistory, roofs: KernelRoofs, keys: tuple[str, ...]
) -> tuple[float, float | None, Work]:
    """Total time, time-weighted percent of roof, and each kernel's FLOPs and compute time."""
    placed = [ctx.placements[k] for k in keys]
    total = sum(p.time_s or 0.0 for p in placed)
    # Like for like: each kernel's roof time on the roof its baseline was bound by.
    roof_time = [
        ((_like_for_like(ctx, k, p) or 0.0) * (p.time_s or 0.0) / 100.0, p.time_s)
        for k, p in zip(keys, placed, strict=True)
        if p.percent_of_roof is not None
    ]
    timed = sum(t or 0.0 for _, t in roof_time)
    pct = 100.0 * sum(r for r, _ in roof_time) / timed if timed else None
    work = [(p.total_flops, p.peak_flop_time_s or math.nan) for p in placed]
    return total, pct, Work(pd.DataFrame(work, columns=WORK, dtype=float), roofs.index(keys))


def _like_for_like(ctx: RunWithHistory, key: str, placement: Placement) -> float | None:
    return like_for_like_percent(placement, ctx.kernel_history(key))


def reference_precision(
    roofs: KernelRoofs, group: KernelGroup, rows: Work, current: Work
) -> str | None:
    """The precision of ``P_ref`` of the group's MFU (see the module docstring).

    Args:
        roofs: The roofs of the run's kernels (the run's first: it has the peaks).
        group: The configured group (``precision`` wins when the roof has it).
        rows: The group's baseline rows.
        current: The current run's kernels.

    Returns:
        The precision, or None when no kernel ran at one precision.
    """
    if group.precision is not None and roofs.roofs[0].peak_flop_per_s.get(group.precision, 0) > 0:
        return group.precision
    precision = None if rows.rows.empty else dominant_precision(roofs, rows)
    return precision if precision is not None else dominant_precision(roofs, current)


HISTORY = ["run_id", "commit", "timestamp", "percent_of_roof", "mfu", "time_s"]


def _per_run(roofs: KernelRoofs, work: Work, precision: str | None) -> pd.DataFrame:
    rows = work.rows
    if rows.empty:
        return pd.DataFrame(columns=HISTORY)
    frame = rows.assign(
        _t=pd.to_numeric(rows["time_s"], errors="coerce"),
        _pct=pd.to_numeric(rows["percent_of_roof"], errors="coerce"),
        _work=held_to(roofs, work, precision),
    )
    frame = frame.assign(
        _troof=frame["_pct"] * frame["_t"] / 100.0,
        _tplaced=frame["_t"].where(frame["_pct"].notna()),
    )
    grouped = frame.groupby("run_id", sort=False).agg(
        commit=("commit", "first"),
        timestamp=("timestamp", "first"),
        t=("_t", "sum"),
        troof=("_troof", "sum"),
        tplaced=("_tplaced", "sum"),
        work=("_work", "sum"),
    )
    grouped["percent_of_roof"] = (
        100.0 * grouped["troof"] / grouped["tplaced"].where(grouped["tplaced"] > 0)
    )
    grouped["mfu"] = grouped["work"].where(grouped["work"] > 0) / grouped["t"]
    grouped["time_s"] = grouped["t"]
    out = grouped.reset_index().sort_values("timestamp", kind="stable")
    return out[HISTORY]


def _history_rows(
    ctx: RunWithHistory, group: KernelGroup, keys: tuple[str, ...], frame: pd.DataFrame
) -> pd.DataFrame:
    if frame.empty:
        return frame
    # Decide per distinct key and name (thousands), not per row (hundreds of thousands).
    raw_keys = frame["kernel_key"].astype(str)
    wanted = set(keys)
    chosen = {k for k in raw_keys.unique() if ctx.config.current_key(k) in wanted}
    if group.nvtx is None:  # history has no NVTX ranges: patterns only select without one
        # A kernel belongs to its FIRST matching group, in history as in the current run, so a
        # catch-all group ("*") does not swallow the kernels of the groups before it.
        pairs = frame[["kernel_key", "kernel_name"]].drop_duplicates()
        for key, name in pairs.itertuples(index=False, name=None):
            if _joins(ctx.config, group, str(key), str(name)):
                chosen.add(str(key))
    return frame[raw_keys.isin(chosen)]


def _joins(config: RulesConfig, group: KernelGroup, key: str, name: str) -> bool:
    """Whether a history kernel joins ``group`` by pattern: its first group, and not ignored.

    ``ignore_kernels`` leaves a kernel out of the run's group, so it leaves it out of the
    group's baseline too: a warm-up kept there read as a 36% group roof-drop.
    """
    current = config.current_key(key)
    if config.is_ignored_kernel(key, name) or config.is_ignored_kernel(current, name):
        return False
    first = config.group_of(current, name, None)
    return first is not None and first.name == group.name


def group_figures(ctx: RunWithHistory) -> Mapping[str, GroupFigures]:
    """Figures of every configured group, by group name (``RuleContext.groups`` keeps them)."""
    members = group_members(ctx)
    roofs = kernel_roofs(ctx.roof, ctx.placements)
    return {g.name: _figures(ctx, roofs, g, members[g.name]) for g in ctx.config.groups}


def _figures(
    ctx: RunWithHistory, roofs: KernelRoofs, group: KernelGroup, keys: tuple[str, ...]
) -> GroupFigures:
    """One group's figures: now, and per run of its baseline and of the gate's."""
    total, pct, work = _current(ctx, roofs, keys)
    rows = _baseline(ctx, roofs, _history_rows(ctx, group, keys, ctx.comparable_history))
    reference = reference_precision(roofs, group, rows, work)
    named = reference
    if reference is not None and (
        faster_than(roofs, rows, reference) or faster_than(roofs, work, reference)
    ):
        named = None
    held = float(held_to(roofs, work, reference).sum())
    mfu = held / total if held > 0 and total else None
    peak = ctx.roof.peak_flop_per_s[reference] if reference is not None else None
    history = _per_run(roofs, rows, reference)
    judged = _gate_series(ctx, roofs, group, keys, reference)
    return GroupFigures(
        group, keys, total, pct, mfu, peak, history, precision=named, gate_history=judged
    )


def _baseline(ctx: RunWithHistory, roofs: KernelRoofs, rows: pd.DataFrame) -> Work:
    return history_work(roofs, rows, ctx.config.current_key)


def _gate_series(
    ctx: RunWithHistory,
    roofs: KernelRoofs,
    group: KernelGroup,
    keys: tuple[str, ...],
    precision: str | None,
) -> pd.DataFrame | None:
    """The group's per-run series over the gate's longer history (None without one)."""
    if ctx.gate_history is None:
        return None
    rows = _history_rows(ctx, group, keys, ctx.comparable_gate_history)
    return _per_run(roofs, _baseline(ctx, roofs, rows), precision)
