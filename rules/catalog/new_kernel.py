"""``new-kernel``: a kernel that its baseline has never seen (renames followed via aliases)."""

from __future__ import annotations

import json
from collections.abc import Iterator

from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.gated import GateDecisions
from rules.measures import one_decimal, signed_percent
from rules.renames import Rename
from rules.verdict import Finding, Severity, Stability


class NewKernel(Rule):
    """A kernel appeared that the baseline has never seen (renamed by a fusion, say).

    **Anti-pattern**

    | kernel | time share | % of roof | baseline runs |
    |---|---|---|---|
    | `add_kernel` | 6.1% | 88.0 | 14 (none with this kernel) |

    A kernel that appears in a pull request often means a fusion broke (one fused kernel
    became two) or a kernel was renamed. It has no baseline, so no regression can be seen on
    it. Old names listed in ``aliases`` count as the same kernel. A new kernel that does the
    FLOPs and DRAM bytes of exactly one vanished kernel is named as its likely rename, with its
    percent of roof against the old one's baseline (``rules.renames``).

    **Best practice**

    If it is a rename, add ``aliases = { "old_key" = "new_key" }`` so its history follows
    it. If a fusion broke, restore it: each unfused kernel moves the intermediate through
    memory twice (cut bytes).
    """

    id = "new-kernel"
    group = "inventory"
    default_severity = Severity.INFO
    stability = Stability.STABLE

    class Options(RuleOptions):
        """Options of new-kernel."""

        warn_time_share: float = 0.05

    def check(self, ctx: RuleContext, opts: Options, gate: GateDecisions) -> Iterator[Finding]:
        """A finding per kernel without history, once the baseline has any runs."""
        if ctx.comparable_history.empty:
            return
        runs = ctx.comparable_history["run_id"].nunique()
        for key, kernel in ctx.kernels.items():
            if not ctx.is_new(key) or key in ctx.device_scaling:
                continue
            share = kernel.duration_s / ctx.total_time_s if ctx.total_time_s else 0.0
            severity = Severity.WARN if share >= opts.warn_time_share else Severity.INFO
            rename = ctx.likely_renames.get(key)
            yield self.finding(
                ctx,
                key,
                f"{kernel.name}: new kernel ({_share(share)} of GPU time), not in the "
                f"{runs} baseline runs" + (_rename_story(ctx, rename) if rename else ""),
                severity=severity,
                numbers={"time_share": share, "baseline_runs": runs}
                | (_rename_numbers(rename) if rename else {}),
            )


def _share(share: float) -> str:
    """``12.3%``; a share too small to show at one decimal is ``<0.1%``, as the table shows it."""
    return "<0.1%" if 0 < share < 0.001 else f"{100 * share:.1f}%"


def _rename_story(ctx: RuleContext, rename: Rename) -> str:
    """``; likely a rename of softmax (the same FLOPs and DRAM bytes): 70.2% → 56.0% ...``."""
    placement = ctx.placements[rename.new_key]
    now, level = placement.percent_of_roof, rename.baseline_percent
    against = (
        f": {one_decimal(level)}% → {one_decimal(now)}% of roof ({signed_percent(now / level - 1)})"
        f" against its baseline"
        if now is not None and level
        else ""
    )
    # The exact entry, quoted as TOML reads it (a JSON string is a TOML basic string).
    entry = f"{json.dumps(rename.old_key)} = {json.dumps(rename.new_key)}"
    return (
        f"; likely a rename of {rename.old_name} (the same FLOPs and DRAM bytes){against}. "
        f"If so, add {entry} to aliases under [rules] to judge it against that history"
    )


def _rename_numbers(rename: Rename) -> dict[str, float | str | None]:
    return {
        "likely_rename_of": rename.old_key,
        "renamed_baseline_percent_of_roof": rename.baseline_percent,
        "renamed_baseline_time_s": rename.baseline_time_s,
    }
