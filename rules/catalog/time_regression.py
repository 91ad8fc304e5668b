"""``time-regression``: wall time regressed for records without counters."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import Field

from collectors.schema import KernelRecord
from rules.advice import Advice
from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.figures import GateFigures
from rules.gated import GateDecisions
from rules.judging import CLEARED, GateBatch, cleared, cleared_wording, gate_wording, measured
from rules.measures import seconds, signed_percent, time_samples
from rules.roofline import Placement
from rules.runnerwide import RUNNER_MIN_KERNELS, RUNNER_SHARE, TIME_MEASURE, runner_wide_note
from rules.stats import GATE_Z, CompareOptions, Judgement
from rules.timing import baseline_binding, median_value
from rules.verdict import Finding, KernelStatus, Severity, Stability


class TimeRegression(Rule):
    """Wall time regressed: records without counters, or kernels doing the same work slower.

    **Anti-pattern**

    | benchmark | baseline time (n=14) | current | change |
    |---|---|---|---|
    | `bench_layernorm[n=4096]` | 41.2 µs ± 0.5 | 47.9 µs | +16.3% |
    | `verify_gemm` (tensor_bf16 → fp32, same FLOPs and bytes) | 0.34 ms ± 0.01 | 5.10 ms | 15.1× |

    Without FLOP and byte counts a record cannot be placed on the roofline, so its time is
    judged instead, by the same gate as ``roof-drop``: the median of the run's samples
    against the level since the last confirmed change, beyond ``z_threshold`` noise units
    and by at least ``min_effect`` (suspect), confirmed by the next nights or by a
    re-measurement of the commit (regressed); one the re-measurements do not confirm is
    cleared, an information finding with both figures. Time is the ground truth, so a placed
    kernel doing its baseline's FLOPs (within ``work_tolerance``) is judged on time too when
    its percent of roof can hide the slowdown: its DRAM bytes unchanged but its binding
    precision or tier changed (percent of a different roof), or more DRAM bytes than its
    baseline moved (a fusion broken: the same percent of the DRAM roof in 3× the time). (With
    the same work and binding, percent of roof is the time ratio and roof-drop reports it.)

    **Best practice**

    Find the change that slowed it (the baseline's commit range brackets it). Then collect
    counters (``ncu --set roofline``) or declare a work model, so the next verdict can say
    where the kernel sits against the roof and what class of fix applies.
    """

    id = "time-regression"
    group = "time"
    default_severity = Severity.FAIL
    stability = Stability.STABLE
    compares_to_baseline = True
    statuses = frozenset({KernelStatus.REGRESSED, KernelStatus.SUSPECT})

    class Options(RuleOptions, CompareOptions):
        """Thresholds (see ``rules.stats.GateOptions``); the protocol is ``[rules.gate]``."""

        z_threshold: float = Field(default=GATE_Z, gt=0)
        work_tolerance: float = Field(default=0.02, ge=0)
        runner_share: float = Field(default=RUNNER_SHARE, gt=0, le=1)
        runner_min_kernels: int = Field(default=RUNNER_MIN_KERNELS, ge=1)

    def gate_batches(self, ctx: RuleContext, opts: Options) -> Iterator[GateBatch]:
        """The time of every kernel without counters, and of those doing the same work slower."""
        values = {
            key: measured(ctx, key, ctx.gate_kernel_history(key).time_s, _time)
            for key, placement in ctx.placements.items()
            if key not in ctx.device_scaling
            and (
                placement.percent_of_roof is None
                or key in ctx.partly_counted
                or _judged_on_time(ctx, key, opts.work_tolerance)
            )
        }
        yield GateBatch("time_s", values, opts, higher_is_better=False)

    def check(self, ctx: RuleContext, opts: Options, gate: GateDecisions) -> Iterator[Finding]:
        """A finding per kernel judged on time whose time rose beyond noise."""
        judged = gate.of("time_s")
        for key, decision in judged.items():
            j, m = decision.judgement, decision.measured
            if j.regressed or j.suspect:
                yield self._finding(ctx, key, j, gate_wording(j, m.all, seconds), m.all)
            elif cleared(j, higher_is_better=False):
                yield self._finding(ctx, key, j, cleared_wording(m.all, seconds), m.all)
        note = runner_wide_note(
            judged, ctx.kernels, opts.runner_share, opts.runner_min_kernels, TIME_MEASURE
        )
        if note is not None:  # one for the run: many kernels judged on time got slower together
            yield self.finding(
                ctx, None, note.message, severity=Severity.INFO, numbers=note.numbers
            )

    def _finding(
        self, ctx: RuleContext, key: str, j: Judgement, outcome: str, values: tuple[float, ...]
    ) -> Finding:
        """The time against its level and the gate's outcome: regressed, suspect or cleared."""
        placed = ctx.placements[key].percent_of_roof is not None
        work = _work_words(ctx, key)
        severity = Severity.FAIL if j.regressed else Severity.WARN if j.suspect else Severity.INFO
        return self.finding(
            ctx,
            key,
            f"{ctx.kernels[key].name}: {seconds(j.level)} → {seconds(j.current)} "
            f"({j.current / j.level:.1f}× the time{work})"
            f", level ± {seconds(j.noise)} over {j.n} runs "
            f"({signed_percent(j.relative_change)}); {outcome}",
            severity=severity,
            status=_STATUS.get(severity),
            advice=None if placed else Advice.MEASURE_MORE,
            numbers={
                "baseline_time_s": j.level,
                **GateFigures.of(j, values).numbers(),
                **({} if severity != Severity.INFO else {"outcome": CLEARED}),
            },
        )


#: A finding's kernel status by severity; a cleared suspect (information) keeps its own.
_STATUS = {Severity.FAIL: KernelStatus.REGRESSED, Severity.WARN: KernelStatus.SUSPECT}


def _time(kernel: KernelRecord, placement: Placement) -> list[float]:
    return time_samples(kernel)


def _close(now: float, before: float | None, tolerance: float) -> bool:
    if before is None:
        return now == 0
    return abs(now - before) <= tolerance * max(abs(before), abs(now))


def _judged_on_time(ctx: RuleContext, key: str, tolerance: float) -> bool:
    """Whether a placed kernel's percent of roof can hide a slowdown its time shows.

    Its baseline's FLOPs (the same problem) and either its DRAM bytes under a new binding
    (percent of another roof), or more DRAM bytes than the baseline moved: a fusion broken
    keeps its percent of the DRAM roof while its time grows with the bytes (2.95x the time
    for 3x the bytes passed a PR, a preview intensity-shift its only trace).
    """
    placement, history = ctx.placements[key], ctx.kernel_history(key)
    if not _close(placement.total_flops, median_value(history.total_flops), tolerance):
        return False
    _, nbytes = ctx.kernels[key].work()
    now, before = nbytes.get("dram", 0.0), median_value(history.bytes_dram)
    if _close(now, before, tolerance):
        binding = baseline_binding(history)
        return binding is not None and binding != placement.binding
    return placement.total_flops > 0 and before is not None and now > before


def _work_words(ctx: RuleContext, key: str) -> str:
    """``, same FLOPs and bytes`` or ``, same FLOPs, 3.0× the DRAM bytes`` for a placed kernel."""
    if ctx.placements[key].percent_of_roof is None:
        return ""
    _, nbytes = ctx.kernels[key].work()
    before = median_value(ctx.kernel_history(key).bytes_dram)
    now = nbytes.get("dram", 0.0)
    if before and not _close(now, before, _BYTES_SAID):
        return f", same FLOPs, {now / before:.1f}× the DRAM bytes"
    return ", same FLOPs and bytes"


#: Bytes within this share of the baseline's read as the same in a finding's words.
_BYTES_SAID = 0.02
