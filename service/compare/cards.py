"""What a comparison is made of: each card's roof and its kernels' levels."""

from __future__ import annotations

from dataclasses import dataclass, field

from rules import DeviceLevel, Roof
from service.compare.model import Comparison


@dataclass(frozen=True)
class Card:
    """One column of the view: a card (or one of its runners), its roof, its kernels' levels.

    Attributes:
        label: The card (``device / runner`` when compared by runner).
        roof: The roof its newest run was placed on.
        runs: Its base-branch runs read.
        levels: Each kernel's current level there, by key.
        few: The keys whose runs there are fewer than the gate's level needs
            (``min_runs``): their level is the median of those runs (a card added last
            night is shown, not left out).
        first_times: Each kernel's times on its first runs read there, oldest first (up to
            ``rules.CALIBRATING_NIGHTS``): whether the card carried it at its level.
        own_roofs: Each level's own roof of ``roof`` (``rules.level_roofs``), by key.
    """

    label: str
    roof: Roof
    runs: int
    levels: dict[str, DeviceLevel] = field(default_factory=dict)
    few: frozenset[str] = frozenset()
    first_times: dict[str, tuple[float, ...]] = field(default_factory=dict)
    own_roofs: dict[str, Roof] = field(default_factory=dict)

    def roof_of(self, level: DeviceLevel) -> Roof:
        """The roof ``level`` (one of ``levels``) was placed on: chosen once for the card."""
        own = self.own_roofs.get(level.key)
        return own if own is not None else level.roof_on(self.roof)


@dataclass(frozen=True)
class CompareView:
    """The comparison, the cards it was made of (the charts draw their kernels), the target.

    Attributes:
        comparison: The rows and columns shown.
        cards: The cards, the reference first.
        target: The roof of the card forecast on, if any.
    """

    comparison: Comparison
    cards: tuple[Card, ...]
    target: Roof | None = None
