"""``above-roof``: the kernel ran faster than its roof allows."""

from __future__ import annotations

import math
from collections.abc import Iterator

from rules.advice import Advice
from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.gated import GateDecisions
from rules.roofline import Placement
from rules.verdict import Finding, Severity, Stability

#: A kernel moving more than this many times the L2 size cannot be served from it.
CACHE_FACTOR = 2.0


def likely_cause(placement: Placement, has_l2_bytes: bool, moved: float, l2: float | None) -> str:
    """The most likely reason for a figure above the roof, from what the record holds.

    ``moved``: the DRAM bytes counted; ``l2``: the device's L2 size (None: unknown). A kernel
    that moves far more than the L2 holds is not running from cache.
    """
    if placement.binding == "dram" and l2 and moved > CACHE_FACTOR * l2:
        return (
            f"not cache-resident ({moved / 1e9:.2g} GB moved, L2 {l2 / 1e6:.0f} MB): check the "
            "bandwidth figure, the clocks and the byte count"
        )
    if placement.binding == "dram" and not has_l2_bytes:
        return "data probably cache-resident: collect L2 bytes and judge against the L2 roof"
    if placement.binding == "dram":
        return "data served from L2, not DRAM: check cache control (ncu --cache-control all)"
    if placement.binding and placement.binding.startswith("tensor_"):
        return "the peak may be wrong for this device or a sparse figure, or FLOPs overcounted"
    return "wrong device spec or clocks above the datasheet's (check clock control)"


class AboveRoof(Rule):
    """Achieved exceeds the roof: cache-resident data, wrong device spec, clocks or a sparse peak.

    **Anti-pattern**

    | kernel | roof | binding | T_roof | measured T | % of roof |
    |---|---|---|---|---|---|
    | `rmsnorm_small` | H100-SXM5 (datasheet) | dram | 12.0 µs | 9.1 µs | 131.9 |

    Percent of roof above ``100 + tolerance_percent`` is physically impossible against a
    correct roof: the verdicts of this kernel cannot be trusted until the cause is found.

    **Best practice**

    Judge cache-resident working sets against the L2 roof (collect L2 bytes), flush caches
    between replays (``ncu --cache-control all``), lock clocks (``--clock-control base``),
    and make sure the catalog peak is the dense one for this exact device.
    """

    id = "above-roof"
    group = "roofline"
    default_severity = Severity.WARN
    stability = Stability.STABLE

    class Options(RuleOptions):
        """Options of above-roof."""

        tolerance_percent: float = 2.0

    def check(self, ctx: RuleContext, opts: Options, gate: GateDecisions) -> Iterator[Finding]:
        """A finding per kernel above ``100 + tolerance_percent`` percent of roof.

        A warning where it is news. A kernel whose newest baseline run was above the roof
        too is a known condition of the base branch, not of this run: it is listed as info,
        so a cache-resident microbenchmark does not warn on every PR and every night.
        """
        limit = 100.0 + opts.tolerance_percent
        for key, placement in ctx.placements.items():
            pct = placement.percent_of_roof
            if pct is None or pct <= limit:
                continue
            kernel = ctx.kernels[key]
            moved = kernel.work()[1]
            cause = likely_cause(
                placement, bool(moved.get("l2")), moved.get("dram", 0.0), ctx.roof.l2_cache_bytes
            )
            before = _newest_baseline_percent(ctx, key)
            known = before is not None and before > limit
            since = f"; known: {before:.1f}% in the newest baseline run" if known else ""
            yield self.finding(
                ctx,
                key,
                f"{kernel.name}: {pct:.1f}% of roof ({placement.binding}) is above the roof; "
                f"{cause}{since}",
                severity=Severity.INFO if known else None,
                advice=Advice.CHECK_ROOF,
                numbers={"tolerance_percent": opts.tolerance_percent, "cause": cause},
            )


def _newest_baseline_percent(ctx: RuleContext, key: str) -> float | None:
    """The kernel's percent of roof in its newest comparable baseline run (None: none)."""
    values = ctx.kernel_history(key).percent_of_roof
    if len(values) == 0 or math.isnan(values[-1]):
        return None
    return float(values[-1])
