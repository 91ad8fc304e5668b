"""``missing-kernel``: a kernel of the latest baseline run is not in this run."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import Field

from collectors.schema import NOT_AVERAGED, KernelRecord
from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.gated import GateDecisions
from rules.renames import recent_kernels
from rules.timing import median_time
from rules.verdict import Finding, KernelStatus, Severity, Stability


class MissingKernel(Rule):
    """A kernel vanished: it ran in the latest baseline run but not in this one.

    **Anti-pattern**

    | kernel | baseline time share | last seen | this run |
    |---|---|---|---|
    | `fused_add_rmsnorm` | 4.2% | `a1b2c3d` | absent |

    A kernel that disappears may be a welcome fusion, a rename, or a code path that no
    longer runs (a feature flag, a dispatch that now picks a slow fallback). Renames listed
    in ``aliases`` are followed and not reported.

    **Best practice**

    If it was renamed, add ``aliases = { "old_key" = "new_key" }`` so its history follows
    it. If the fused kernel was replaced by unfused pieces, restore the fusion (cut bytes).
    If it was removed on purpose, there is nothing to do: it leaves the baseline by itself.
    """

    id = "missing-kernel"
    group = "inventory"
    default_severity = Severity.WARN
    stability = Stability.STABLE
    #: Its findings make the kernel an entry of the verdict with status ``missing``.
    statuses = frozenset({KernelStatus.MISSING})

    class Options(RuleOptions):
        """Options of missing-kernel."""

        recent_runs: int = Field(default=1, ge=1)  # 0: no kernel could ever be missing

    def check(self, ctx: RuleContext, opts: Options, gate: GateDecisions) -> Iterator[Finding]:
        """A finding per kernel of the recent baseline runs absent from this run."""
        history = ctx.comparable_history
        if history.empty:
            return
        recent = recent_kernels(history, opts.recent_runs)
        current = set(ctx.kernels)  # measured: a kernel whose every launch failed is not
        failed = {k.key: k for k in ctx.run.kernels if not k.measured}
        renamed_to = {r.old_key: r.new_key for r in ctx.likely_renames.values()}
        columns = (recent[c].astype(str).tolist() for c in ("kernel_key", "kernel_name", "commit"))
        times = recent["time_s"].to_numpy(dtype=float).tolist()
        for key, name, commit, time_s in zip(*columns, times, strict=True):
            if ctx.config.current_key(key) in current:
                continue
            if ctx.config.is_ignored_kernel(key, name):
                continue
            # The baseline's median time, the figure its row shows (not the last night's).
            baseline = median_time(ctx.kernel_history(key).time_s) or time_s
            renamed = renamed_to.get(key)
            numbers: dict[str, float | str | None] = {
                "last_commit": commit,
                "baseline_time_s": baseline,
            }
            if key in failed:
                numbers["failed_launches"] = failed[key].failed_launches
            finding = self.finding(
                ctx,
                key,
                f"{name}: ran in the latest baseline run ({commit[:7]}) but "
                + (_failed(failed[key]) if key in failed else "not in this run")
                + (f"; {_renamed(ctx, renamed)}" if renamed else ""),
                numbers=numbers | ({"likely_renamed_to": renamed} if renamed else {}),
            )
            yield finding.model_copy(update={"kernel_name": name})


def _failed(kernel: KernelRecord) -> str:
    """``its 3 launch(es) in this run have no duration (replay failed: NaN)``."""
    why = [m.partition(NOT_AVERAGED)[2] for m in kernel.missing if NOT_AVERAGED in m]
    told = why and why[0] != "no duration"
    return f"its {kernel.failed_launches} launch(es) in this run have no duration" + (
        f" ({why[0]})" if told else ""
    )


def _renamed(ctx: RuleContext, new_key: str) -> str:
    """``likely renamed to softmax_v2 (the same FLOPs and DRAM bytes)`` (``rules.renames``)."""
    return f"likely renamed to {ctx.kernels[new_key].name} (the same FLOPs and DRAM bytes)"
