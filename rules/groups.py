"""Kernel groups judged as a whole: time-weighted percent of roof and MFU, now and per baseline run.

For a group's placed kernels ``i`` (FLOPs ``F_ip``, times ``T_i``, speed-of-light ``T_roof,i``)::

    percent of roof = 100 * sum_i T_roof,i / sum_i T_i        (time-weighted)
    MFU             = sum_i sum_p (F_ip / P_p) / sum_i T_i

MFU is achieved FLOP/s over the peak of the precisions used, each precision weighted by its
FLOPs; with one precision it is ``achieved FLOP/s / P``. Baseline runs store each kernel's
``sum_p F_p / P_p`` (``peak_flop_time_s``), so a baseline's MFU is exact even when the
precision mix changed (a GEMM that fell off the tensor cores).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import pandas as pd

from collectors.schema import KernelRecord
from rules.config import KernelGroup, RulesConfig
from rules.roofline import Placement


class GroupSource(Protocol):
    """What group figures are computed from (a ``RuleContext`` provides it).

    A protocol rather than ``RuleContext`` itself, so that the context can build its groups
    without this module importing the context back (no import cycle).
    """

    @property
    def config(self) -> RulesConfig:
        """The rules configuration."""

    @property
    def kernels(self) -> Mapping[str, KernelRecord]:
        """The run's kernels by identity key."""

    @property
    def placements(self) -> Mapping[str, Placement]:
        """The kernels placed on the roof."""

    @property
    def comparable_history(self) -> pd.DataFrame:
        """Like-for-like baseline rows."""


@dataclass(frozen=True)
class GroupFigures:
    """A group's current figures and its per-run baseline series.

    Attributes:
        group: The configured group.
        keys: The current run's kernels in the group.
        time_s: Their total time.
        percent_of_roof: Time-weighted percent of roof (None when nothing is placed).
        mfu: Model FLOP utilisation, 0-1 (None without FLOPs).
        effective_peak: ``sum F / sum (F_p / P_p)``, FLOP/s (None without FLOPs).
        history: One row per baseline run, oldest first: ``run_id``, ``commit``,
            ``timestamp``, ``percent_of_roof``, ``mfu``.
    """

    group: KernelGroup
    keys: tuple[str, ...]
    time_s: float
    percent_of_roof: float | None
    mfu: float | None
    effective_peak: float | None
    history: pd.DataFrame

    @property
    def key(self) -> str:
        """The key group findings use."""
        return f"group:{self.group.name}"


def group_members(ctx: GroupSource) -> dict[str, tuple[str, ...]]:
    """Kernel keys per group name (a kernel belongs to its first matching group)."""
    members: dict[str, list[str]] = {g.name: [] for g in ctx.config.groups}
    for key, kernel in ctx.kernels.items():
        group = ctx.config.group_of(key, kernel.name, kernel.nvtx_range)
        if group is not None:
            members[group.name].append(key)
    return {name: tuple(keys) for name, keys in members.items()}


def _current(
    ctx: GroupSource, keys: tuple[str, ...]
) -> tuple[float, float | None, float | None, float | None]:
    placed = [ctx.placements[k] for k in keys]
    total = sum(p.time_s or 0.0 for p in placed)
    roof_time = [(p.t_roof_s, p.time_s) for p in placed if p.percent_of_roof is not None]
    timed = sum(t or 0.0 for _, t in roof_time)
    pct = 100.0 * sum(r or 0.0 for r, _ in roof_time) / timed if timed else None
    flops = sum(p.total_flops for p in placed)
    compute_time = sum(sum(p.compute.terms.values()) for p in placed)
    mfu = compute_time / total if total and compute_time else None
    peak = flops / compute_time if compute_time else None
    return total, pct, mfu, peak


def _per_run(rows: pd.DataFrame) -> pd.DataFrame:
    frame = rows.assign(
        _t=pd.to_numeric(rows["time_s"], errors="coerce"),
        _pct=pd.to_numeric(rows["percent_of_roof"], errors="coerce"),
        _flops=pd.to_numeric(rows["peak_flop_time_s"], errors="coerce"),
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
        flops=("_flops", "sum"),
    )
    grouped["percent_of_roof"] = (
        100.0 * grouped["troof"] / grouped["tplaced"].where(grouped["tplaced"] > 0)
    )
    peak_time = grouped["flops"].where(grouped["flops"] > 0)
    grouped["mfu"] = peak_time / grouped["t"]
    out = grouped.reset_index().sort_values("timestamp", kind="stable")
    return out[["run_id", "commit", "timestamp", "percent_of_roof", "mfu"]]


def _history_rows(ctx: GroupSource, group: KernelGroup, keys: tuple[str, ...]) -> pd.DataFrame:
    frame = ctx.comparable_history
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
            first = ctx.config.group_of(ctx.config.current_key(str(key)), str(name), None)
            if first is not None and first.name == group.name:
                chosen.add(str(key))
    return frame[raw_keys.isin(chosen)]


def group_figures(ctx: GroupSource) -> Mapping[str, GroupFigures]:
    """Figures of every configured group, by group name."""
    members = group_members(ctx)
    figures: dict[str, GroupFigures] = {}
    for group in ctx.config.groups:
        keys = members[group.name]
        total, pct, mfu, peak = _current(ctx, keys)
        rows = _history_rows(ctx, group, keys)
        history = (
            _per_run(rows)
            if not rows.empty
            else pd.DataFrame(columns=["run_id", "commit", "timestamp", "percent_of_roof", "mfu"])
        )
        figures[group.name] = GroupFigures(group, keys, total, pct, mfu, peak, history)
    return figures
