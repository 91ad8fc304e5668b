"""The rules' configuration: select/ignore, per-rule options, kernel groups, aliases, policy.

Plain pydantic models; the service reads ``roofguard.toml`` and passes a ``RulesConfig`` down.
Nothing here reads files or the environment.
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from collectors.schema import Precision
from rules.roofline import DEFAULT_BORDERLINE_BAND, Regime
from rules.stats import GateSettings

FailOn = Literal["fail", "warn", "never"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class IgnoreEntry(_Frozen):
    """Do not report ``rule`` for kernels whose key or name matches ``kernels``.

    Attributes:
        rule: Rule id or group name ("*" for every rule).
        kernels: Glob on the kernel's identity key or display name ("*" for all kernels).
    """

    rule: str
    kernels: str = "*"


class KernelGroup(_Frozen):
    """A named set of kernels judged as a whole, with what the team believes about it.

    Attributes:
        name: Display name, e.g. "decode". Group findings use the key ``group:<name>``.
        pattern: Glob on the kernel's identity key or display name ("*" with ``nvtx`` to
            select by NVTX range only).
        nvtx: Glob on the kernel's NVTX range; when set, a kernel must match it too.
        regime: Declared regime of the group's kernels (checked by regime-mislabel).
        target_percent: Percent of roof the group should reach (time-weighted).
        precision: The precision the group's work should run at (``tensor_bf16``): its MFU is
            measured against that peak (default: the baseline's dominant precision).
        owners: Who to tell (GitHub handles or teams).
    """

    name: str = Field(min_length=1)
    pattern: str = "*"
    nvtx: str | None = None
    regime: Regime | None = None
    target_percent: float | None = Field(default=None, gt=0, le=100)
    precision: Precision | None = None
    owners: tuple[str, ...] = ()

    def matches(self, key: str, name: str, nvtx_range: str | None) -> bool:
        """Whether a kernel belongs to this group."""
        if self.nvtx is not None and not fnmatchcase(nvtx_range or "", self.nvtx):
            return False
        return fnmatchcase(key, self.pattern) or fnmatchcase(name, self.pattern)


class RulesConfig(_Frozen):
    """What the engine runs and how it concludes.

    Attributes:
        select: Rule ids or groups to run (default: all).
        ignore: Rule/kernel pairs not to report; the more specific match wins over ``select``.
        options: Per-rule options, ``{rule_id: {option: value}}``, validated against each
            rule's ``Options`` model by the registry.
        groups: Kernel groups (first match wins for a kernel's display group).
        aliases: Renamed kernels, ``{old_key: new_key}``: history under the old key is the
            new key's baseline, and the old key is not reported missing.
        ignore_kernels: Globs of kernels left out entirely (not judged, not listed).
        borderline_band: The regime is borderline within a factor of 1 + band of the ridge.
        near_roof_percent: Percent of roof from which a kernel counts as at the roof.
        fail_on: ``fail``: fail the check on failing findings; ``warn``: on warnings too;
            ``never``: report only.
        gate: How the baseline rules confirm a change (``[rules.gate]``): ``confirm_runs``,
            the family-wise error ``family_error``, and the fail-at-once bar of a PR without
            a re-measure step (``rules.stats.GateSettings``).
    """

    select: tuple[str, ...] = ("all",)
    ignore: tuple[IgnoreEntry, ...] = ()
    options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    groups: tuple[KernelGroup, ...] = ()
    aliases: dict[str, str] = Field(default_factory=dict)
    ignore_kernels: tuple[str, ...] = ()
    borderline_band: float = Field(default=DEFAULT_BORDERLINE_BAND, ge=0)
    near_roof_percent: float = Field(default=80.0, gt=0, le=100)
    fail_on: FailOn = "fail"
    gate: GateSettings = Field(default_factory=GateSettings)

    @model_validator(mode="after")
    def _unique_group_names(self) -> RulesConfig:
        names = [g.name for g in self.groups]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"groups: duplicate group name(s) {duplicates}")
        return self

    @model_validator(mode="after")
    def _aliases_lead_somewhere(self) -> RulesConfig:
        """Refuse a kernel renamed to itself or a cycle of renames.

        Either was accepted, and merged the histories of the kernels in it: an unchanged
        kernel read as a regime flip and an 86% drop.
        """
        for old in self.aliases:
            chain, key = [old], self.aliases[old]
            while key in self.aliases and key not in chain:
                chain.append(key)
                key = self.aliases[key]
            if key in chain:
                loop = " -> ".join(repr(k) for k in [*chain[chain.index(key) :], key])
                raise ValueError(f"aliases: renames lead back to a kernel they rename ({loop})")
        return self

    def group_of(self, key: str, name: str, nvtx_range: str | None) -> KernelGroup | None:
        """The first group a kernel belongs to, if any."""
        return next((g for g in self.groups if g.matches(key, name, nvtx_range)), None)

    def is_ignored_kernel(self, key: str, name: str) -> bool:
        """Whether the kernel is left out entirely: ``ignore_kernels`` matches its key or name."""
        return is_ignored(key, self.ignore_kernels) or is_ignored(name, self.ignore_kernels)

    def current_key(self, key: str) -> str:
        """The newest name of ``key``, following ``aliases`` (old -> new) transitively."""
        seen = {key}
        while key in self.aliases and self.aliases[key] not in seen:
            key = self.aliases[key]
            seen.add(key)
        return key

    def old_keys(self, key: str) -> tuple[str, ...]:
        """Keys that ``key`` was renamed from (followed transitively)."""
        if not self.aliases:  # asked of every kernel by several rules: the usual case first
            return ()
        found: list[str] = []
        frontier = [key]
        while frontier:
            current = frontier.pop()
            for old, new in self.aliases.items():
                if new == current and old not in found and old != key:
                    found.append(old)
                    frontier.append(old)
        return tuple(found)


def is_ignored(key_or_name: str, ignore_kernels: Sequence[str]) -> bool:
    """Whether one of the ``ignore_kernels`` globs matches a kernel's key or its name.

    The one rule for what ``ignore_kernels`` leaves out: the checks ask it of a kernel's key
    and name (``RulesConfig.is_ignored_kernel``), the digest of each distinct key and name.
    """
    return any(fnmatchcase(key_or_name, pattern) for pattern in ignore_kernels)
