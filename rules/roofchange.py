"""A device's datasheet figures corrected since the baseline: earlier runs re-read on today's roof.

A team that fixes a peak in roofguard.toml (``[devices."H100-SXM5"]`` dram 3.35 -> 6.7 TB/s)
halves every memory-bound kernel's percent of roof at the same time: the baseline runs keep
the roof they were placed on (``runs.roof_json``) and every unchanged kernel read as a 50%
drop. A kernel's measured time does not depend on the figures it is judged against, so each
baseline run placed on other datasheet figures is read again on today's, as rules/README.md
defines percent of roof: ``100 * T_roof / T`` from the run's stored work (FLOPs per precision,
bytes per tier) and its own time, regime and binding resource from the new roof.

Each run keeps its own clocks: a datasheet roof scaled to a report's clocks
(``rules.clocks``) has every FLOP/s peak and the L1/L2 bandwidths times one SM-clock factor,
and DRAM bandwidth times one memory-clock factor. A ``ClockedRoof`` stores its datasheet roof
(``unscaled``) and gives both factors exactly; a plain scaled roof gives them through the
figures the correction left alone (the factor most of its SM-side figures share; DRAM, a
figure of its own, is read at the run's own memory clock unless the configuration sets it,
then at today's run's: ``_memory_fallback``). A
device whose datasheet has no boost (memory) clock is never scaled on that side (factor 1).

Only datasheet figures are re-read: a report's or a calibration's roof was measured, and
stays as it was. The history rows of the runs re-read are placed on their new roofs by
``rules.rereadhistory``. Pure functions of roofs; no I/O.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from rules.clocks import ClockedRoof
from rules.roofline import Roof

#: Figures within this relative difference are one figure (JSON round trips, clock rounding).
SAME_FIGURE = 1e-6
#: The tier scaled with the memory clock; every other figure scales with the SM clock.
MEMORY_TIER = "dram"


@dataclass(frozen=True)
class FigureChange:
    """One datasheet figure then and now (None: the roof had no such figure).

    Attributes:
        name: The precision or tier.
        before: The datasheet figure the earlier run was placed on (FLOP/s or B/s).
        after: Today's.
    """

    name: str
    before: float | None
    after: float | None

    def words(self) -> str:
        """``dram 3.35 → 6.70 TB/s``."""
        unit = "TFLOP/s" if self.name != MEMORY_TIER and not _is_tier(self.name) else "TB/s"
        return f"{self.name} {_tera(self.before)} → {_tera(self.after)} {unit}"


def _is_tier(name: str) -> bool:
    return name in ("dram", "l2", "l1")


def _tera(value: float | None) -> str:
    return "–" if value is None else f"{value / 1e12:.2f}"


@dataclass(frozen=True)
class Reread:
    """A stored run's roof on today's datasheet, at the run's own clocks.

    Attributes:
        stored: The roof the run was placed on.
        today: The same run's roof on today's datasheet figures.
        changes: The datasheet figures that differ, by name.
    """

    stored: Roof
    today: Roof
    changes: tuple[FigureChange, ...]


def _figures(roof: Roof) -> dict[str, float]:
    return {**roof.peak_flop_per_s, **roof.bandwidth_byte_per_s}


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=SAME_FIGURE, abs_tol=0.0)


def _same_figures(a: Roof, b: Roof) -> bool:
    """Whether two roofs hold the same figures (the cheap test every baseline run takes)."""
    if a.peak_flop_per_s != b.peak_flop_per_s or a.bandwidth_byte_per_s != b.bandwidth_byte_per_s:
        return False
    if isinstance(a, ClockedRoof) and isinstance(b, ClockedRoof):
        return _same_figures(a.unscaled, b.unscaled)
    return not isinstance(a, ClockedRoof) and not isinstance(b, ClockedRoof)


@dataclass(frozen=True)
class Datasheet:
    """Today's datasheet roof of a device and the clocks it may be scaled by.

    Attributes:
        roof: The datasheet roof as it is (the catalog's, with the configuration's figures).
        sm_clocked: The datasheet has a boost clock: FLOP/s and L1/L2 may be scaled.
        memory_clocked: It has a nominal memory clock: DRAM bandwidth may be scaled.
    """

    roof: Roof
    sm_clocked: bool = True
    memory_clocked: bool = True


def _side(name: str) -> str:
    return "memory" if name == MEMORY_TIER else "sm"


def _ratio_key(ratio: float) -> float:
    return float(f"{ratio:.6g}")


def _factors(scaled: Roof, sheet: Datasheet, fallback: Mapping[str, float]) -> dict[str, float]:
    """The SM and memory clock factors ``scaled`` holds against ``sheet`` (see the module).

    A side whose figures share no factor (one figure, or each corrected otherwise) takes
    ``fallback``'s (today's run's); with no fallback, its one figure gives it.
    """
    ratios: dict[str, list[float]] = {"sm": [], "memory": []}
    now = _figures(sheet.roof)
    for name, value in _figures(scaled).items():
        if now.get(name):
            ratios[_side(name)].append(value / now[name])
    clocked = {"sm": sheet.sm_clocked, "memory": sheet.memory_clocked}
    return {
        side: _shared(found, fallback.get(side)) if clocked[side] else 1.0
        for side, found in ratios.items()
    }


def _shared(ratios: list[float], fallback: float | None) -> float:
    """The ratio most figures of a side share, when two do (or one alone with no fallback).

    Shared to 6 digits (figures scaled in floating point); the first such ratio exactly.
    """
    top = Counter(_ratio_key(r) for r in ratios).most_common(1)
    if top and (top[0][1] >= 2 or (len(ratios) == 1 and fallback is None)):
        return next(r for r in ratios if _ratio_key(r) == top[0][0])
    return 1.0 if fallback is None else fallback


def _scaled(roof: Roof, factors: Mapping[str, float]) -> Roof:
    return replace(
        roof,
        peak_flop_per_s={p: v * factors["sm"] for p, v in roof.peak_flop_per_s.items()},
        bandwidth_byte_per_s={
            t: v * factors[_side(t)] for t, v in roof.bandwidth_byte_per_s.items()
        },
    )


def _memory_fallback(stored: Roof, sheet: Datasheet, today: Roof) -> dict[str, float]:
    """The clock factors a scaled roof's lone DRAM figure is read at (see ``_factors``).

    DRAM is one figure: on a card with a nominal memory clock, a run's DRAM bandwidth below
    today's is a memory clock of its own or a corrected figure, and only the configuration can
    tell. Where neither roof's DRAM comes from it (``from_config``), the stored figure is the
    datasheet's at the run's own memory clock: an RTX 4090 run at a 3% lower memory clock read
    as "dram 0.98 → 1.01 TB/s" and was re-read at today's clock.
    """
    fallback = _factors(today, sheet, {})
    from_config = MEMORY_TIER in (*stored.from_config, *sheet.roof.from_config)
    then, now = (r.bandwidth_byte_per_s.get(MEMORY_TIER) for r in (stored, sheet.roof))
    if sheet.memory_clocked and not from_config and then and now:
        fallback["memory"] = then / now
    return fallback


def _old_sheet(stored: Roof, sheet: Datasheet, today: Roof) -> tuple[Roof, dict[str, float]]:
    """The datasheet roof ``stored`` was scaled from, and its clock factors."""
    if isinstance(stored, ClockedRoof):
        exact = Datasheet(stored.unscaled, sheet.sm_clocked, sheet.memory_clocked)
        return stored.unscaled, _factors(stored, exact, {})
    factors = _factors(stored, sheet, _memory_fallback(stored, sheet, today))
    unscaled = {"sm": 1 / factors["sm"], "memory": 1 / factors["memory"]}
    return _scaled(stored, unscaled), factors


def _changes(before: Roof, after: Roof) -> tuple[FigureChange, ...]:
    old, new = _figures(before), _figures(after)
    return tuple(
        FigureChange(name, old.get(name), new.get(name))
        for name in sorted(set(old) | set(new))
        if not _same(old.get(name), new.get(name))
    )


def reread_roof(stored: Roof, today: Roof, sheet: Datasheet) -> Reread | None:
    """``stored`` on ``sheet``'s figures at its own clocks; None where nothing is to re-read.

    ``today`` is the roof the run being judged is placed on. None for a roof that is not a
    datasheet one of the same device, or holds today's figures (scaled alike, or otherwise).
    """
    if stored.source != "datasheet" or today.source != "datasheet":
        return None
    if stored.device != today.device or _same_figures(stored, today):
        return None
    old_sheet, factors = _old_sheet(stored, sheet, today)
    changes = _changes(old_sheet, sheet.roof)
    if not changes:
        return None
    now = replace(_scaled(sheet.roof, factors), from_config=sheet.roof.from_config)
    if isinstance(stored, ClockedRoof):
        now = ClockedRoof(**vars(now), unscaled=sheet.roof)
    return Reread(stored, now, changes)


def change_note(device: str, rereads: Iterable[Reread]) -> str:
    """The verdict's note: which figures changed, old → new, and what was done about it."""
    seen: dict[str, None] = {}
    for reread in rereads:
        for change in reread.changes:
            seen.setdefault(change.words())
    return (
        f"{device} roof changed since the baseline: {', '.join(seen)}; "
        "earlier runs re-read on today's roof"
    )


def datasheet_from(roof: Roof, spec: Roof, sm_clocked: bool, memory_clocked: bool) -> Datasheet:
    """The datasheet ``roof`` was placed on, where no configuration is at hand (the digest).

    A ``ClockedRoof`` holds it; a scaled roof is unscaled by the factor most of its SM-side
    figures share against the catalog's ``spec`` (DRAM at its nominal clock).
    """
    if isinstance(roof, ClockedRoof):
        return Datasheet(roof.unscaled, sm_clocked, memory_clocked)
    catalog = Datasheet(spec, sm_clocked, memory_clocked)
    factors = _factors(roof, catalog, {"sm": 1.0, "memory": 1.0})
    unscaled = _scaled(roof, {side: 1 / factor for side, factor in factors.items()})
    return Datasheet(unscaled, sm_clocked, memory_clocked)
