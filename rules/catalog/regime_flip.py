"""``regime-flip``: the regime (or the tensor-core use) changed versus the baseline."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.history import KernelHistory
from rules.roofline import COMPUTE_BOUND, MEMORY_BOUND
from rules.verdict import Finding, Severity, Stability


def _usual(values: tuple[str | None, ...]) -> tuple[str | None, int]:
    """The most common known value and how often it occurs (latest wins a tie)."""
    counts = Counter(v for v in reversed(values) if v)
    if not counts:
        return None, 0
    value, count = counts.most_common(1)[0]
    return value, count


def _is_tensor(binding: str | None) -> bool:
    return bool(binding) and str(binding).startswith("tensor_")


class RegimeFlip(Rule):
    """Regime changed versus the baseline (e.g. a fusion broke: compute → memory).

    **Anti-pattern**

    | kernel | baseline (n=14) | current | binding | intensity (dram) |
    |---|---|---|---|---|
    | `fused_mlp` | compute-bound | memory-bound | tensor_bf16 → dram | 310 → 42 FLOP/B |
    | `attn_gemm` | compute-bound (tensor_bf16) | compute-bound | tensor_bf16 → fp32 | 170 → 170 |

    The baseline's usual regime (the majority of at least ``min_runs`` runs) differs from
    the current one, and the kernel is outside the borderline band. A compute-bound kernel
    whose binding precision moved off the tensor cores (``tensor_*`` → ``fp*``) is reported
    too: its percent of roof may look fine against the lower roof while it runs far slower.

    **Best practice**

    A flip to memory-bound usually means lost fusion or reuse: restore the fusion, keep
    intermediates on chip. A GEMM that fell off the tensor cores needs its dtype, layout or
    alignment fixed so the tensor-core path is taken again.
    """

    id = "regime-flip"
    group = "regime"
    default_severity = Severity.FAIL
    stability = Stability.STABLE
    compares_to_baseline = True
    statuses = frozenset({"regressed"})

    class Options(RuleOptions):
        """Options of regime-flip."""

        min_runs: int = 3
        to_compute_severity: Severity = Severity.WARN
        check_tensor_cores: bool = True

    def check(self, ctx: RuleContext, opts: Options) -> Iterator[Finding]:
        """A finding per kernel whose regime or tensor-core use flipped."""
        for key, placement in ctx.placements.items():
            if placement.regime is None or placement.borderline:
                continue
            history = ctx.kernel_history(key)
            usual, count = _usual(history.regime)
            if usual is None or count < opts.min_runs:
                continue
            name = ctx.kernels[key].name
            numbers: dict[str, float | str | None] = {"baseline_regime": usual, "baseline_n": count}
            if usual != placement.regime:
                severity = Severity.FAIL if placement.regime == MEMORY_BOUND else None
                yield self.finding(
                    ctx,
                    key,
                    f"{name}: {usual} over {count} baseline runs, now {placement.regime} "
                    f"(bound by {placement.binding})",
                    severity=severity or opts.to_compute_severity,
                    numbers=numbers,
                )
            elif opts.check_tensor_cores and usual == COMPUTE_BOUND:
                yield from self._tensor(ctx, key, history, opts)

    def _tensor(
        self, ctx: RuleContext, key: str, history: KernelHistory, opts: Options
    ) -> Iterator[Finding]:
        binding = ctx.placements[key].binding
        usual, count = _usual(history.binding)
        if usual is None or count < opts.min_runs:
            return
        if _is_tensor(usual) and not _is_tensor(binding):
            yield self.finding(
                ctx,
                key,
                f"{ctx.kernels[key].name}: fell off the tensor cores, bound by {binding} "
                f"instead of {usual} ({count} baseline runs)",
                numbers={"baseline_binding": usual, "baseline_n": count},
            )
