"""The digest's options: its thresholds, and what else decides what it lists as moved."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from rules.stats import ChangePointOptions
from service.digest.acceptance import Acceptance
from service.digest.devices import GATE_WINDOW


class DigestOptions(BaseModel):
    """How the digest decides what moved.

    Attributes:
        min_segment: Nights a new level must hold before it is reported (2: one bad night
            pages nobody).
        window: Nights on each side the change-point detector compares.
        z_threshold: Robust z a change must reach (in units of the series' noise).
        min_effect: Smallest relative change that is reported, of the medians of the levels
            before and after (percent of roof; time's ratio - 1), in every section.
        recovery_tolerance: A regression has recovered when a later level is back within this
            fraction of the level before it (0.02: within 2%).
        lookback_days: History before the period that is scanned, so regressions that started
            earlier are tracked (unresolved by age) rather than reported again.
        gate_window: The card before's last nights a device change judges against (the
            config's ``baseline.gate_window``, as a PR check's cross-device baseline).
        workers: Processes a large history's stages may share (``service.digest.workers``;
            1: none). Spawned workers re-import the caller's main module: a script setting
            it guards its entry point; ``roofguard digest`` uses one a core.
        accepted: The repository's ``/roofguard accept``s up to the period's end (the gate's
            baseline starts after each): the changes they cover are listed as accepted, not as
            regressions (``service.digest.accepted``).
        ignore_kernels: The config's ``rules.ignore_kernels``: kernels left out of the digest
            as they are of every check (``service.digest.ignored``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    min_segment: int = Field(default=2, ge=1)
    window: int = Field(default=8, ge=2)
    z_threshold: float = Field(default=5.0, gt=0)
    min_effect: float = Field(default=0.03, ge=0)
    recovery_tolerance: float = Field(default=0.02, ge=0, lt=1)
    lookback_days: int = Field(default=90, ge=0)
    gate_window: int = Field(default=GATE_WINDOW, ge=1)
    workers: int = Field(default=1, ge=1)
    accepted: tuple[Acceptance, ...] = ()
    ignore_kernels: tuple[str, ...] = ()

    def change_point_options(self) -> ChangePointOptions:
        """The detector's thresholds."""
        return ChangePointOptions(
            window=self.window,
            min_segment=self.min_segment,
            z_threshold=self.z_threshold,
            min_effect=self.min_effect,
        )
