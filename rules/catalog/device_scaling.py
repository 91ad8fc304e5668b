"""``device-scaling``: a kernel did not keep up with a new card (its percent of roof fell)."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import Field

from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.crossdevice import Keeping, Scaling, keeping
from rules.gated import GateDecisions
from rules.measures import speed
from rules.newcard import on_first_nights
from rules.scaling import CROSS_DEVICE_TOLERANCE
from rules.verdict import Finding, KernelStatus, Severity, Stability


def _message(name: str, s: Scaling) -> str:
    level = s.baseline
    text = (
        f"{name}: expected {speed(s.expected_time_ratio)} on {s.device}, measured "
        f"{speed(s.time_ratio)}: {level.percent:.0f}% → {s.percent:.0f}% of the {s.binding} "
        f"roof (against {level.device} history, {level.n} runs); it did not keep up with the "
        "new card"
    )
    before = s.prediction.source_binding
    if before != s.binding:
        text += (
            f"; the ridge moved: the same work is bound by {before} on {level.device} and "
            f"by {s.binding} on {s.device}"
        )
    return text


def _numbers(s: Scaling, opts: DeviceScaling.Options) -> dict[str, float | str | None]:
    level = s.baseline
    return {
        "baseline_device": level.device,
        "baseline_n": level.n,
        "baseline_percent_of_roof": level.percent,
        "percent_of_baseline_roof": s.percent,
        "relative_change": s.relative_change,
        "z": s.z,
        "z_threshold": opts.z_threshold,
        "tolerance": opts.tolerance,
        "baseline_time_s": level.time_s,
        "expected_time_ratio": s.expected_time_ratio,
        "time_ratio": s.time_ratio,
        "baseline_binding": s.prediction.source_binding,
        "expected_binding": s.binding,
        "baseline_roof_time_s": s.prediction.source_s,
        "expected_roof_time_s": s.prediction.target_s,
    }


class DeviceScaling(Rule):
    """A kernel did not keep up with a new card: its percent of roof fell across the change.

    **Anti-pattern**

    | kernel | baseline: A100-SXM4-80GB (n=30) | now: H100-SXM5 | roofs predict | measured |
    |---|---|---|---|---|
    | `decode_gemv<half>` | 85% of the dram roof | 55% | 1.64× faster | 1.06× faster |

    A kernel with fewer than 6 base-branch runs on the run's card (the gate's settled level)
    and a level on another card is judged in percent of roof against that card's history:
    each card on its own roofs, the baseline's work placed on both (``rules.scaling``). The
    roofs predict its time ratio (the bandwidth ratio for a memory-bound kernel, the peak
    ratio of its precision for a compute-bound one, the whole roofline when the ridge moved);
    a kernel whose time fell less than that lost percent of roof. More than ``tolerance``
    (15%: cards differ that much in what their best kernels reach) and beyond the baseline's
    noise, it is *suspect*: it did not keep up with the new card. Kernels that scaled as the
    roofs predict are unchanged, not new. From its 2nd night on the card, roof-drop's gate
    judges its nights there too (``rules.newcard``): a kernel that kept up and then fell is
    its finding (a regression once confirmed), not this rule's. Once its first nights there
    kept up (the least bad median of up to 4, as the weekly digest reads a device change),
    this rule leaves it to the gate, whatever it reads later. Once the card has its own
    settled history, the gate judges the kernel there alone.

    **Best practice**

    A kernel tuned for the old card often keeps its old tiling, launch shape or memory path:
    memory-bound far below the roof, check access patterns, vectorised loads and occupancy
    for the new card's bandwidth; compute-bound, use the new card's tensor-core instructions
    and tile sizes. ``roofguard compare`` shows every kernel on both cards.
    """

    id = "device-scaling"
    group = "roofline"
    default_severity = Severity.WARN
    stability = Stability.STABLE
    compares_to_baseline = True
    statuses = frozenset({KernelStatus.SUSPECT})

    class Options(RuleOptions):
        """Thresholds of the cross-device comparison."""

        min_runs: int = Field(default=3, ge=1)
        tolerance: float = Field(default=CROSS_DEVICE_TOLERANCE, ge=0, lt=1)
        z_threshold: float = Field(default=4.0, gt=0)

    def check(self, ctx: RuleContext, opts: Options, gate: GateDecisions) -> Iterator[Finding]:
        """A finding per kernel whose percent of roof fell across the device change."""
        on_own_card = gate.of("percent_of_roof")
        for key, scaled in ctx.device_scaling.items():
            if scaled.baseline.n < opts.min_runs:
                continue
            own = on_own_card.get(key)
            if own and (own.judgement.regressed or own.judgement.suspect):
                continue  # it fell on the new card after its first nights: roof-drop's
            if self._kept_up_there(ctx, opts, scaled):
                continue  # the card carried it; a fall since is this card's, the gate's
            judged = keeping(scaled, tolerance=opts.tolerance, z_threshold=opts.z_threshold)
            if judged == Keeping.BEHIND:
                yield self.finding(
                    ctx,
                    key,
                    _message(ctx.kernels[key].name, scaled),
                    numbers=_numbers(scaled, opts),
                )

    @staticmethod
    def _kept_up_there(ctx: RuleContext, opts: Options, scaled: Scaling) -> bool:
        """Whether the kernel's first nights on its card kept up (``rules.newcard``).

        Once the gate confirmed a fall after them, the fallen level is the card's: judged on
        tonight alone, that night read "did not keep up" and blamed the card for the code.
        """
        first = on_first_nights(scaled, ctx.gate_kernel_history(scaled.key).time_s)
        if first is None:
            return False
        judged = keeping(first, tolerance=opts.tolerance, z_threshold=opts.z_threshold)
        return judged != Keeping.BEHIND
