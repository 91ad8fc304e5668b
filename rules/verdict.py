"""The verdict model: findings per kernel and the run's conclusion.

These are pydantic models so the service can write them as JSON (``roofguard check --format
json``) and render them; ``rules`` itself does no I/O.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rules.advice import Advice
from rules.figures import GateFigures
from rules.outcomes import NOT_JUDGED as NOT_JUDGED
from rules.outcomes import Conclusion as Conclusion
from rules.outcomes import KernelStatus as KernelStatus
from rules.outcomes import Severity as Severity
from rules.outcomes import Stability as Stability
from rules.outcomes import shown_conclusion as shown_conclusion
from rules.roofline import Intensity, Regime


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Finding(_Model):
    """One thing a rule found about one kernel (or the run, when ``kernel`` is None).

    Attributes:
        rule: Rule id, e.g. "roof-drop".
        kernel: The kernel's identity key.
        kernel_name: Its display name.
        device: Catalog id or reported name of the device.
        roof: The roof judged against, e.g. "H100-SXM5 (datasheet)".
        severity: fail, warn or info.
        stability: stable or preview (preview findings never fail the check).
        message: One line a person understands.
        advice: The advice class of the roofline decision procedure.
        advice_text: The advice in words.
        binding: Binding resource (precision or tier).
        numbers: The figures used: current, baseline centre/spread/n, intensity, ...
        profile: What the profiler saw move against the baseline run, most first, in words
            (``registers 96 -> 168: occupancy 50% -> 25%``); on a kernel's worst finding.
    """

    rule: str
    kernel: str | None
    kernel_name: str | None = None
    device: str | None = None
    roof: str | None = None
    severity: Severity
    stability: Stability = Stability.STABLE
    message: str
    advice: Advice | None = None
    advice_text: str | None = None
    binding: str | None = None
    numbers: dict[str, float | str | None] = Field(default_factory=dict)
    profile: tuple[str, ...] = ()

    @property
    def counts(self) -> bool:
        """Whether this finding may affect the conclusion."""
        return self.stability == Stability.STABLE

    @property
    def status(self) -> KernelStatus | None:
        """The kernel status it sets (``numbers["status"]``, from its rule's ``statuses``)."""
        return KernelStatus.parse(self.numbers.get("status"))

    @property
    def gate(self) -> GateFigures | None:
        """The gate's figures (roof-drop, time-regression); None for other findings."""
        return GateFigures.from_numbers(self.numbers)

    @property
    def measure(self) -> str | None:
        """A group's finding's measure, ``percent_of_roof`` or ``mfu``; None for a kernel's."""
        measure = self.numbers.get("measure")
        return measure if isinstance(measure, str) else None


class BaselineSummary(_Model):
    """What a kernel was judged against.

    Attributes:
        n: Number of baseline runs.
        center: Robust centre (median) of percent of roof over the baseline.
        spread: Robust spread (scaled MAD) of percent of roof.
        regime: The baseline's regime (most recent run).
        relative_change: ``(current - center) / center`` (a drop is negative).
        history: Recent percent-of-roof values, oldest first (for sparklines).
        used: ``(first, end)``: the positions in ``history`` of the runs ``n``, ``center``
            and ``spread`` summarise, when they are only part of it: the gate's current
            segment (the runs since the kernel's last confirmed change, without the nights
            of a pending one), which its findings are judged against. None: all of it.
        commits: The baseline's commit range (first, last).
        metric: What ``center``/``spread``/``history`` measure: ``percent_of_roof``, or
            ``time_s`` for kernels without counters (lower is better).
        time_s: Median measured time over the baseline runs (for a group or the run: of the
            per-run total), the ground truth beside any percentage.
        binding: The baseline's usual binding precision or tier (the majority of its runs).
        device: The device whose history this is. A kernel's baseline names it only when it
            is another card's (judged across devices, ``rules.scaling``); the run's baseline
            always does.
        scaled_to: Judged across devices, the run's card: ``center``, ``spread``, ``history``
            and ``relative_change`` are then percent of the roof the baseline's work has on
            it (``binding``): ``device``'s level, or the gate's level over its runs scaled to
            this card's nights and those nights (``rules.newcard``). ``time_s`` is ``device``'s.
        scaled_n: Of ``n``, ``device``'s runs (the others are nights on ``scaled_to``).
        device_level: ``device``'s own level, in percent of its roof (its ``binding`` there).
        runner_since: The position in ``history`` of the first run on the verdict's runner,
            new to the baseline (a swap; ``len(history)``: only this run). The service sets
            it (``service.pipeline.runnernote``); the trend marks it.
    """

    n: int
    center: float | None = None
    spread: float | None = None
    regime: Regime | None = None
    relative_change: float | None = None
    history: tuple[float, ...] = ()
    used: tuple[int, int] | None = None
    commits: tuple[str, ...] = ()
    metric: str = "percent_of_roof"
    time_s: float | None = None
    binding: str | None = None
    device: str | None = None
    runner_since: int | None = None
    scaled_to: str | None = None
    scaled_n: int | None = None
    device_level: BaselineSummary | None = None


class RunBaseline(BaselineSummary):
    """The run as a whole at baseline (``Verdict.baseline``).

    Attributes:
        runs: Stored runs the run was judged against (0: none, so nothing was judged: every
            kernel is new, and the verdict says so instead of passing). A verdict stored
            before the field existed reads ``n``.
        min_runs: Baseline runs the gate needs before it judges a kernel (``[baseline]
            min_runs``): with fewer ``runs`` nothing was judged either (0: not recorded).
    """

    runs: int = 0
    min_runs: int = 0

    @model_validator(mode="before")
    @classmethod
    def _runs_default_to_n(cls, data: Any) -> Any:
        if isinstance(data, dict) and "runs" not in data:
            return {**data, "runs": data.get("n", 0)}
        return data


class GroupVerdict(_Model):
    """A kernel group (config) judged as a whole.

    Attributes:
        name: Group name; its findings use the kernel key ``group:<name>``.
        kernels: Identity keys of the run's kernels in the group.
        time_s: Total measured time of those kernels.
        time_share: Share of the run's total GPU time (0-1).
        percent_of_roof: Time-weighted percent of roof, ``100 * sum T_roof / sum T`` over the
            placed kernels.
        mfu: Model FLOP utilisation, ``sum_k min(F_k / P_ref, T_peak_k) / sum T``, now and per
            baseline run: work at a faster precision than ``P_ref``'s counts at its own peak.
        mfu_precision: The precision of ``P_ref``: the config's for the group, else the one of
            most baseline FLOPs (None: some work counted at a faster precision's own peak).
        time_ratio: ``time_s`` over the baseline's median total time (2.0: twice as slow).
        regime: The group's declared regime, if any.
        target_percent: The group's target percent of roof, if any.
        owners: Who owns the group.
        baseline: Percent-of-roof baseline of the group (per baseline run).
        mfu_baseline: MFU baseline of the group (per baseline run).
    """

    name: str
    kernels: tuple[str, ...] = ()
    time_s: float = 0.0
    time_share: float = 0.0
    percent_of_roof: float | None = None
    mfu: float | None = None
    mfu_precision: str | None = None
    time_ratio: float | None = None
    regime: Regime | None = None
    target_percent: float | None = None
    owners: tuple[str, ...] = ()
    baseline: BaselineSummary | None = None
    mfu_baseline: BaselineSummary | None = None


class KernelVerdict(_Model):
    """One kernel's placement in the run, with its baseline.

    Attributes:
        key: Identity key.
        name: Display name.
        group: Kernel group (config), when it belongs to one.
        time_s: Measured total time.
        time_share: Share of the run's total GPU time (0-1).
        percent_of_roof: 0-100 (may exceed 100: see above-roof).
        regime: memory-bound or compute-bound.
        borderline: Within the band around the ridge.
        binding: Binding resource.
        tier: The memory tier that sets ``T_memory`` (the binding tier of a compute-bound
            kernel's memory side; its intensity is the one shown).
        intensity: FLOP/byte per tier (``inf``, null in JSON, for a tier with no bytes).
        t_roof_s: Speed-of-light time.
        roof: The roof used.
        advice: Advice class.
        status: regressed, suspect (worse beyond noise, not confirmed), improved,
            unchanged, new, unplaced, or missing (in the baseline, not in this run: its
            ``baseline`` holds its figures and time; ``time_s`` is 0 and nothing is placed).
        baseline: Baseline summary, None for new kernels.
        measurements: Every measurement of the commit in the judged metric (percent of
            roof, or time for unplaced kernels): the run's, then each re-measurement's.
        time_ratio: ``time_s`` over ``baseline.time_s`` (15.1: fifteen times slower).
        percent_of_baseline_roof: Percent of the roof its baseline was bound by
            (``baseline.binding``), like for like when the binding precision or tier changed;
            equal to ``percent_of_roof`` when it did not.
        missing: Why the kernel could not be placed (or only partly), in words.
        percent_is_lower_bound: ``percent_of_roof`` comes from part of the work only (no FLOP
            counts, or a precision or tier the roof has no peak for): the true figure is at
            least this, since the missing part can only lengthen ``T_roof``.
        expected_time_ratio: Judged against another card's history (``baseline.device``):
            the time ratio the two roofs predict for the baseline's work, beside the measured
            ``time_ratio``; its ``percent_of_baseline_roof`` is then
            ``baseline.device_level.center · expected_time_ratio / time_ratio``. None on the
            run's own card.
    """

    key: str
    name: str
    group: str | None = None
    time_s: float
    time_share: float
    percent_of_roof: float | None
    regime: Regime | None
    borderline: bool = False
    binding: str | None
    tier: str | None = None
    intensity: dict[str, Intensity] = Field(default_factory=dict)
    t_roof_s: float | None = None
    roof: str | None = None
    advice: Advice | None = None
    status: KernelStatus = KernelStatus.UNCHANGED
    baseline: BaselineSummary | None = None
    measurements: tuple[float, ...] = ()
    time_ratio: float | None = None
    percent_of_baseline_roof: float | None = None
    missing: tuple[str, ...] = ()
    percent_is_lower_bound: bool = False
    expected_time_ratio: float | None = None


class Verdict(_Model):
    """The verdict on one run.

    Attributes:
        conclusion: pass, warn or fail.
        repo: OWNER/NAME.
        commit: The run's commit.
        pull_request: PR number, when a PR run.
        device: Device the run was judged on.
        roof: The roof judged against (label).
        roofs: All roofs shown (e.g. datasheet and measured).
        trusted: False when the runner failed its health preflight (no regression verdict).
        kernels: Every kernel of the run and every missing one (status ``missing``), worst
            first.
        findings: Every finding, worst first.
        notes: Run-level remarks (env mismatch, missing metrics ...).
        run_id: History-store id of the run, when stored.
        groups: Kernel groups judged as a whole (config ``groups``).
        time_s: Total measured GPU time of the run's kernels.
        baseline: The run as a whole at baseline: ``time_s`` is the median total GPU time of
            the baseline runs, ``n`` and ``runs`` their number (``runs`` 0: no baseline yet),
            ``commits`` their range, ``device`` the device whose history the run was judged
            against. Judged against another card's
            history, ``time_s`` is the sum of the baseline times of the kernels judged so.
        time_ratio: ``time_s`` over ``baseline.time_s`` (across cards: of those kernels).
        expected_time_ratio: Across cards, the time ratio the roofs predict for those kernels
            (their baseline times, each scaled by its ``expected_time_ratio``); else None.
    """

    conclusion: Conclusion
    repo: str | None = None
    commit: str | None = None
    pull_request: int | None = None
    device: str | None = None
    roof: str | None = None
    roofs: tuple[str, ...] = ()
    trusted: bool = True
    kernels: tuple[KernelVerdict, ...] = ()
    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = ()
    run_id: int | None = None
    groups: tuple[GroupVerdict, ...] = ()
    time_s: float = 0.0
    baseline: RunBaseline | None = None
    time_ratio: float | None = None
    expected_time_ratio: float | None = None

    @property
    def baseline_runs(self) -> int:
        """Stored runs the run was judged against (0: none)."""
        return self.baseline.runs if self.baseline is not None else 0

    @property
    def judged_nothing(self) -> bool:
        """No baseline yet, or fewer runs than the gate needs: kernels stored, none judged.

        A verdict without a run baseline at all (built by hand, or stored by an older
        version) says nothing about it.
        """
        base = self.baseline
        return base is not None and (base.runs == 0 or base.runs < base.min_runs)

    @property
    def not_judged(self) -> bool:
        """Judged nothing and failed nothing (``shown_conclusion``): neither pass nor fail."""
        return shown_conclusion(self.conclusion, self.judged_nothing) == NOT_JUDGED

    @property
    def regressions(self) -> int:
        """Number of failing findings that count."""
        return sum(1 for f in self.findings if f.severity == Severity.FAIL and f.counts)

    @property
    def warnings(self) -> int:
        """Number of warning findings that count (a missing kernel is one, not silence)."""
        return sum(1 for f in self.findings if f.severity == Severity.WARN and f.counts)

    @property
    def regressed(self) -> int:
        """Kernels and groups that fail (one GEMM failing three rules is one regression).

        A group counts only when none of its kernels fails: a group that fails because its
        kernel did is that kernel's regression, not another one.
        """
        failing = {f.kernel for f in self.findings if f.severity == Severity.FAIL and f.counts}
        explained = {f"group:{g.name}" for g in self.groups if failing.intersection(g.kernels)}
        return len(failing - explained)

    @property
    def regression_count(self) -> str:
        """``"1 regression"``: kernels and groups that fail, each once whatever fails it.

        One root cause is one regression: a GEMM that fell off the tensor cores fails
        regime-flip, roof-drop and time-regression and counts once; its other findings are
        the evidence (``regressions`` counts them all).
        """
        n = self.regressed
        return f"{n} regression{'s' if n != 1 else ''}"
