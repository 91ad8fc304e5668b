"""``regime-mislabel``: the measured regime is not the regime declared for the kernel's group."""

from __future__ import annotations

from collections.abc import Iterator

from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.gated import GateDecisions
from rules.verdict import Finding, Severity, Stability


class RegimeMislabel(Rule):
    """Measured regime differs from the regime declared for the kernel in config.

    **Anti-pattern**

    | kernel | group (declared) | measured | T_compute | T_memory | binding |
    |---|---|---|---|---|---|
    | `prefill_gemm` | prefill (compute-bound) | memory-bound | 0.21 ms | 0.64 ms | dram |

    The team's belief about the kernel, written down as a group's ``regime``, does not hold:
    the effort goes into the wrong kind of optimisation. Kernels within the borderline band
    around the ridge are not reported (their regime is noise).

    **Best practice**

    Optimise for the regime the kernel is really in. A "compute-bound" GEMM that measures
    memory-bound moves too many bytes per FLOP: larger tiles, better reuse, fusion. A
    "memory-bound" kernel that measures compute-bound does redundant arithmetic: cut
    recomputation, use tensor cores. Or correct the declaration.
    """

    id = "regime-mislabel"
    group = "regime"
    default_severity = Severity.WARN
    stability = Stability.STABLE

    class Options(RuleOptions):
        """Options of regime-mislabel."""

        report_borderline: bool = False

    def check(self, ctx: RuleContext, opts: Options, gate: GateDecisions) -> Iterator[Finding]:
        """A finding per kernel whose measured regime contradicts its group's declaration."""
        for key, placement in ctx.placements.items():
            kernel = ctx.kernels[key]
            group = ctx.config.group_of(key, kernel.name, kernel.nvtx_range)
            if group is None or group.regime is None or placement.regime is None:
                continue
            if placement.regime == group.regime:
                continue
            if placement.borderline and not opts.report_borderline:
                continue
            yield self.finding(
                ctx,
                key,
                f"{kernel.name}: declared {group.regime} (group {group.name}) but measures "
                f"{placement.regime}, bound by {placement.binding}",
                numbers={"declared_regime": group.regime, "group": group.name},
            )
