"""The weekly digest as data: what moved, per kernel and device, and what is still unresolved.

These models are the ``--json`` contract of ``roofguard digest`` and what the markdown and HTML
templates render. Percentages are percent of roof; ``relative_change`` is
``(new - old) / old`` of percent of roof, so a drop is negative.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from rules import Regime
from service.config import RoofguardConfig
from service.digest.acceptance import AcceptedChange
from service.digest.devices import DeviceChange
from service.digest.offroof import OffRoof
from service.digest.options import DigestOptions as DigestOptions
from service.digest.sharedmove import SharedMove
from service.digest.unmeasured import UnmeasuredDevice
from service.digest.untrusted import UntrustedRuns


class KernelTarget(BaseModel):
    """What a team declared for a group of kernels (from the config's kernel groups).

    Attributes:
        pattern: Shell-style pattern matched against the identity key (``*gemv*``).
        name: Display name of the group.
        regime: The regime the team believes the kernels are in.
        target_percent: Percent of roof the kernels should reach.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    pattern: str
    name: str | None = None
    regime: Regime | None = None
    target_percent: float | None = Field(default=None, gt=0)


def targets_from_config(config: RoofguardConfig) -> list[KernelTarget]:
    """Declared regimes and targets of the config's kernel groups.

    Groups selected by NVTX range are left out: nightly history does not keep the range.
    """
    groups = config.rules.groups
    return [
        KernelTarget(
            pattern=g.pattern, name=g.name, regime=g.regime, target_percent=g.target_percent
        )
        for g in groups
        if g.nvtx is None
    ]


class Movement(BaseModel):
    """A change of level in one kernel's nightly series (a regression or an improvement).

    Attributes:
        kernel: Identity key.
        kernel_name: Display name.
        device: Device as stored.
        relative_change: ``(after - before) / before`` of percent of roof.
        before: Median percent of roof of the level before.
        after: Median percent of roof of the new level.
        current: Percent of roof of the last night of the period.
        since: Timestamp of the first night at the new level.
        from_commit: Last good commit (the last night at the old level).
        to_commit: First bad commit (the first night at the new level).
        recovered_at: For regressions: the first night back within tolerance, if any.
        age_days: Days from ``since`` to the end of the period.
        sparkline: Percent of roof over the period as block characters.
    """

    kernel: str
    kernel_name: str
    device: str
    relative_change: float
    before: float
    after: float
    current: float
    since: datetime
    from_commit: str
    to_commit: str
    recovered_at: datetime | None = None
    age_days: float
    sparkline: str = ""


class RegimeFlip(BaseModel):
    """The measured regime changed and held for at least ``min_segment`` nights.

    Attributes:
        kernel: Identity key.
        kernel_name: Display name.
        device: Device as stored.
        from_regime: Regime before.
        to_regime: Regime after.
        relative_change: ``(after - before) / before`` of median percent of roof around the flip.
        since: Timestamp of the first night in the new regime.
        from_commit: Last commit in the old regime.
        to_commit: First commit in the new regime.
    """

    kernel: str
    kernel_name: str
    device: str
    from_regime: str
    to_regime: str
    relative_change: float
    since: datetime
    from_commit: str
    to_commit: str


class BindingFlip(BaseModel):
    """The binding precision or tier changed (tensor_bf16 → fp32, dram → l2) and held.

    Attributes:
        kernel: Identity key.
        kernel_name: Display name.
        device: Device as stored.
        from_binding: Binding before.
        to_binding: Binding after.
        relative_change: ``(after - before) / before`` of median percent of roof around the
            flip, like for like (both on the binding held first in the window, as the whole
            digest is): a GEMM off the tensor cores reads -93%, a fusion restored +318%.
        time_ratio: Median time after over before (the ground truth: 15.1 is 15x slower).
        since: Timestamp of the first night with the new binding.
        from_commit: Last commit with the old binding.
        to_commit: First commit with the new binding.
    """

    kernel: str
    kernel_name: str
    device: str
    from_binding: str
    to_binding: str
    relative_change: float
    time_ratio: float | None = None
    since: datetime
    from_commit: str
    to_commit: str


class TimeMovement(BaseModel):
    """A rise of a kernel's nightly time that held (a time regression).

    Attributes:
        kernel: Identity key.
        kernel_name: Display name.
        device: Device as stored.
        before_s: Median time of the level before, seconds.
        after_s: Median time of the new level.
        ratio: ``after_s / before_s``.
        current_s: Time of the last night of the period.
        since: First night at the new level.
        from_commit: Last good commit (the last night at the old level).
        to_commit: First bad commit (the first night at the new level).
        from_binding: Binding resource the night before the change.
        to_binding: Binding resource the night of the change (a change says why).
    """

    kernel: str
    kernel_name: str
    device: str
    before_s: float
    after_s: float
    ratio: float
    current_s: float
    since: datetime
    from_commit: str
    to_commit: str
    from_binding: str | None = None
    to_binding: str | None = None


class VanishedKernel(BaseModel):
    """A kernel that stopped running, alone or replaced by others (a fusion that broke).

    Attributes:
        kernel: Identity key.
        kernel_name: Display name.
        device: Device as stored.
        change: ``vanished`` (nothing new that night), ``replaced`` (one new kernel),
            ``split`` (several new kernels: a fused kernel replaced by its pieces) or
            ``merged`` (it and ``merged_with`` vanished, the new ones came: a fusion).
        last_seen: Last night it ran.
        since: First night without it.
        from_commit: Last commit it ran at.
        to_commit: First commit without it.
        last_time_s: Its time on the last night it ran.
        replaced_by: Kernels that first ran the night it vanished (same device).
        replacement_time_s: Their total time that night.
        merged_with: The other kernels that vanished that night with it (``merged``).
    """

    kernel: str
    kernel_name: str
    device: str
    change: Literal["vanished", "replaced", "split", "merged"]
    last_seen: datetime
    since: datetime
    from_commit: str
    to_commit: str
    last_time_s: float
    replaced_by: list[str] = Field(default_factory=list)
    replacement_time_s: float | None = None
    merged_with: list[str] = Field(default_factory=list)


class Mislabel(BaseModel):
    """The latest measured regime differs from the one declared in config.

    Attributes:
        kernel: Identity key.
        device: Device as stored.
        group: The config group that declares the regime.
        declared: Declared regime.
        measured: Regime of the last night.
    """

    kernel: str
    device: str
    group: str
    declared: str
    measured: str


class BelowTarget(BaseModel):
    """A kernel whose recent level is below its group's target percent of roof.

    Attributes:
        kernel: Identity key.
        device: Device as stored.
        group: The config group that sets the target.
        target_percent: The target.
        current: Median percent of roof of the last ``min_segment`` nights.
        gap: ``target_percent - current``, in points.
    """

    kernel: str
    device: str
    group: str
    target_percent: float
    current: float
    gap: float


class DeviceSummary(BaseModel):
    """One device over the period.

    Attributes:
        device: Device as stored.
        kernels: Kernels with a measurement in the period.
        kernels_on_roof: Of ``kernels``, those placed on the roof (the rest are timed alone);
            None where not counted apart (every kernel).
        nights: Distinct nightly runs in the period.
        median_percent_of_roof: Median over kernels of their last night's percent of roof.
        regressions: New regressions in the period.
        improvements: New improvements in the period.
        regime_flips: Regime flips in the period.
        unresolved: Regressions not recovered at the end of the period (any age).
    """

    device: str
    kernels: int
    nights: int
    median_percent_of_roof: float | None
    regressions: int
    improvements: int
    regime_flips: int
    unresolved: int
    kernels_on_roof: int | None = None


class Digest(BaseModel):
    """The digest of one period.

    Attributes:
        repo: OWNER/NAME the history belongs to, when known.
        start: Start of the period (inclusive).
        end: End of the period (inclusive).
        week: ISO week of the period's middle, e.g. "2026-W48" (titles the GitHub issue).
        measurements: Nightly measurements scanned (period and lookback).
        regressions: New regressions in the period, worst first.
        improvements: New improvements in the period that are not recoveries, best first.
        recoveries: Regressions (of any age) that recovered in the period.
        regime_flips: Regime flips in the period.
        binding_flips: Binding precision or tier flips in the period.
        time_regressions: Nightly time rises in the period, slowest-down first.
        vanished: Kernels that stopped running in the period (alone, replaced or split).
        mislabels: Kernels whose latest regime differs from the declared one.
        below_target: Kernels below their group's target, farthest first.
        unresolved: Regressions not recovered at the end of the period, oldest first.
        unresolved_time: Time rises not recovered then, of kernels not in ``unresolved``.
        devices: Per-device summary.
        device_changes: Cards whose nightly runs started in the period, each judged against
            the card before it in percent of roof (``service.digest.devices``).
        shared_moves: Nights many kernels of a device moved together (runner, driver, toolchain).
        unmeasured: Devices with nightly runs before the period and none in it, that no card
            took over from (``service.digest.unmeasured``): their kernels are not judged.
        lookback_days: Days scanned before the period: an older regression is not unresolved.
        off_roof: Per device, the kernels timed alone at their newest night in the period
            that were on the roof before (``service.digest.offroof``).
        accepted: Regressions a maintainer accepted (``/roofguard accept``) that held in the
            period or were accepted in it; none of them is in another section.
        untrusted_runs: Per device, the period's nightly runs left out of every section: their
            runner failed its health preflight (``service.digest.untrusted``).
    """

    repo: str | None
    start: datetime
    end: datetime
    week: str
    measurements: int
    regressions: list[Movement]
    improvements: list[Movement]
    recoveries: list[Movement]
    regime_flips: list[RegimeFlip]
    binding_flips: list[BindingFlip] = Field(default_factory=list)
    time_regressions: list[TimeMovement] = Field(default_factory=list)
    vanished: list[VanishedKernel] = Field(default_factory=list)
    mislabels: list[Mislabel]
    below_target: list[BelowTarget]
    unresolved: list[Movement]
    unresolved_time: list[TimeMovement] = Field(default_factory=list)
    devices: list[DeviceSummary]
    device_changes: list[DeviceChange] = Field(default_factory=list)
    shared_moves: list[SharedMove] = Field(default_factory=list)
    unmeasured: list[UnmeasuredDevice] = Field(default_factory=list)
    off_roof: list[OffRoof] = Field(default_factory=list)
    lookback_days: int = 90
    accepted: list[AcceptedChange] = Field(default_factory=list)
    untrusted_runs: list[UntrustedRuns] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def headline(self) -> str:
        """One line: the counts a reader checks first (in the JSON too).

        Time regressions lead: a GEMM that fell onto a lower roof keeps its percent of roof
        while it gets 15x slower, and "0 new regressions" first read as a quiet week.
        """
        if not self.measurements and not self.unmeasured:  # a repository named wrong, say
            of = f" of {self.repo}" if self.repo else ""
            return f"No nightly run{of} stored up to {self.end:%Y-%m-%d}: nothing to digest"
        parts = [
            _count(len(self.time_regressions), "time regression"),
            _count(len(self.regressions), "new regression"),
            _count(len(self.improvements), "improvement"),
            _count(len(self.recoveries), "recovery", "recoveries"),
            _count(len(self.regime_flips), "regime flip"),
            _count(len(self.binding_flips), "binding flip"),
            _count(len(self.vanished), "vanished or split kernel"),
            _count(len(self.unresolved), "unresolved regression"),
        ]
        if self.unresolved_time:  # only where there are: kernels timed alone are rare
            parts.append(_count(len(self.unresolved_time), "unresolved time regression"))
        if self.accepted:  # a regression the week had, though no longer one
            parts.append(_count(len(self.accepted), "accepted change"))
        if self.shared_moves:  # one cause, not a kernel's worth of regressions each
            parts.insert(
                0,
                _count(  # a night's move in percent of roof and in time is one move
                    len({(m.device, m.since, m.direction) for m in self.shared_moves}),
                    "move shared by many kernels",
                    "moves shared by many kernels",
                ),
            )
        if self.device_changes:  # a new card is no quiet week
            parts.insert(0, _count(len(self.device_changes), "device change"))
        lost = sum(entry.kernels for entry in self.off_roof)
        if lost:  # nor kernels whose roofline is no longer measured
            parts.insert(0, _count(lost, "kernel", "kernels") + " off the roof")
        if self.unmeasured:  # nor is a card that ran nothing
            parts.insert(0, _count(len(self.unmeasured), "device", "devices") + " not measured")
        return ", ".join(parts)


def _count(n: int, singular: str, plural: str | None = None) -> str:
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"
