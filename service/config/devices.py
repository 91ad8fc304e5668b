"""``[devices.*]`` entries a GPU cannot have, or that no report would find, refused at load.

A figure is positive and within what a GPU does (a unit slip, TB/s written as 1.008, put a
kernel at 281,387,972,962% of its roof). A new id a letter or two from a catalog name with the
same numbers (H800-SMX) is a typo unless the entry lists the names its reports print
(``aliases``). No name may belong to two cards (the catalog's came first, silently). A card the
catalog lacks gives its DRAM bandwidth, or its memory-bound kernels are never placed.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Mapping
from typing import Any

from rules import Catalog, builtin_catalog, normalise_name

#: Below this a peak (FLOP/s) or a bandwidth (B/s) is no GPU's. The slowest figure of a GPU
#: (a Jetson Nano's fp64, about 7e9 FLOP/s) lies above it; every catalog figure written in
#: giga or tera units (at most 1e16 / 1e9 = 1e7) lies below it, so no such slip passes.
MIN_FIGURE = 1e9
#: Above this no single device: 100x the catalog's fastest figure (a GB200's dense fp4, 1e16).
MAX_FIGURE = 1e18
#: A new id this many letter edits or fewer from a catalog name with its numbers is a typo.
MAX_TYPO_EDITS = 2
#: The SI prefixes a figure may have been written in, by power of ten.
PREFIXES = {"P": 15, "T": 12, "G": 9, "M": 6, "k": 3}
#: The unit of each table of figures.
UNITS = {"peak_flop_per_s": "FLOP/s", "bandwidth_byte_per_s": "B/s"}
_EDITS = {1: "one letter edit", 2: "two letter edits"}

#: (key below ``devices.``, reason) of an entry to refuse.
Problem = tuple[str, str]


def si(value: float) -> str:
    """``value`` as a TOML reader writes it: 1.008, 900, 1.008e12, 336e9, 616e18."""
    if value == 0 or 1e-3 <= abs(value) < 1e4:
        return f"{value:g}"
    power = 3 * math.floor(math.log10(abs(value)) / 3)
    return f"{value / 10**power:.6g}e{power}"


def odd_figure(name: str, entry: Mapping[str, Any]) -> Problem | None:
    """The first peak or bandwidth of ``entry`` that is not positive or no GPU's, and why."""
    spec = builtin_catalog().find(name)
    for table, unit in UNITS.items():
        figures = entry.get(table)
        if not isinstance(figures, Mapping):
            continue  # the model names a wrong type
        for slot, value in figures.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue  # the scalars' check names it
            if not math.isfinite(value) or (reason := _implausible(value, unit)) is None:
                continue  # the model names NaN and infinity
            known = getattr(spec, table).get(slot) if spec is not None else None
            hint = _hint(value, unit, known or _typical(table, str(slot)))
            if spec is not None and known is not None:
                hint += f" ({spec.id}'s catalog figure: {si(known)} {unit})"
            return f"{name}.{table}.{slot}", reason + hint
    return None


def _typical(table: str, slot: str) -> float:
    """The catalog's median figure of ``slot`` (its table's when no card has that slot)."""
    figures = [getattr(spec, table) for spec in builtin_catalog().devices.values()]
    own = [f[slot] for f in figures if slot in f]
    return float(statistics.median(own or [v for f in figures for v in f.values()]))


def _implausible(value: float, unit: str) -> str | None:
    if value <= 0:
        return f"must be positive ({unit}), not {si(value)}"
    if value < MIN_FIGURE:
        return f"{si(value)} {unit} is below {si(MIN_FIGURE)} {unit}, slower than any GPU"
    if value > MAX_FIGURE:
        return f"{si(value)} {unit} is above {si(MAX_FIGURE)} {unit}, faster than any GPU"
    return None


def _hint(value: float, unit: str, reference: float) -> str:
    """The prefix ``value`` looks written with: the one that puts it nearest ``reference``."""
    if value <= 0:
        return ""
    if value > MAX_FIGURE:
        return ": check the exponent"
    fits = [(p, value * 10**e) for p, e in PREFIXES.items() if _within(value * 10**e)]
    if not fits:
        return ""
    prefix, meant = min(fits, key=lambda fit: abs(math.log10(fit[1] / reference)))
    return f": {si(value)} looks like {prefix}{unit}: write {si(meant)}"


def _within(value: float) -> bool:
    return MIN_FIGURE <= value <= MAX_FIGURE


def misnamed(devices: Mapping[str, Mapping[str, Any]]) -> Problem | None:
    """A typo'd new id, a new card without DRAM bandwidth, or a name two cards claim."""
    catalog = builtin_catalog()
    taken: dict[str, tuple[str, str]] = {}  # folded name -> (device id, who names it)
    for spec in catalog.devices.values():
        for known in (spec.id, spec.display, *spec.aliases):
            taken.setdefault(normalise_name(known), (spec.id, f"the catalog's {spec.id}"))
    for name, entry in devices.items():
        found = catalog.find(name)
        if found is None:
            problem = _typo(name, entry, catalog) or _without_dram(name, entry)
            if problem is not None:
                return problem
        problem = _clash(name, entry, found.id if found else None, taken)
        if problem is not None:
            return problem
    return None


def _typo(name: str, entry: Mapping[str, Any], catalog: Catalog) -> Problem | None:
    """A new id without aliases a letter edit or two from a catalog name with its numbers."""
    if entry.get("aliases") or " " in name.strip():
        # Aliases, or an id written as a report prints it (the form the unknown-device
        # error suggests, ``[devices."NVIDIA GeForce RTX 4090 D"]``): a card of its own.
        return None
    folded = normalise_name(name)
    numbers = re.findall(r"\d+", folded)
    near: list[tuple[int, str]] = []
    for spec in catalog.devices.values():
        for known in map(normalise_name, (spec.id, spec.display, *spec.aliases)):
            if re.findall(r"\d+", known) == numbers:
                near.append((edits(folded, known), spec.id))
    if not near or min(near)[0] > MAX_TYPO_EDITS:
        return None
    rank = {known: index for index, known in enumerate(catalog.suggest(name, len(near)))}
    count, meant = min(near, key=lambda one: (one[0], rank.get(one[1], len(rank))))
    return name, (
        f"not in the catalog, and {_EDITS.get(count, f'{count} letter edits')} from {meant}: "
        f"did you mean {meant}? (`roofguard devices` lists the catalog; a card it lacks names "
        "itself new with aliases = [<the names its reports print>])"
    )


def edits(a: str, b: str) -> int:
    """Letters to insert, delete, change or swap with a neighbour to make ``a`` into ``b``."""
    rows = [list(range(len(b) + 1))]
    for i, x in enumerate(a, 1):
        row = [i]
        for j, y in enumerate(b, 1):
            row.append(min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (x != y)))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


def _without_dram(name: str, entry: Mapping[str, Any]) -> Problem | None:
    bandwidths = entry.get("bandwidth_byte_per_s")
    if isinstance(bandwidths, Mapping) and "dram" in bandwidths:
        return None
    return f"{name}.bandwidth_byte_per_s.dram", (
        "a card the catalog lacks needs its DRAM bandwidth (B/s, e.g. 336e9): without it no "
        "kernel's memory time is placed, and no figure of a report stands in for it "
        '(roof = "report" judges on the report\'s own)'
    )


def _clash(
    name: str, entry: Mapping[str, Any], known: str | None, taken: dict[str, tuple[str, str]]
) -> Problem | None:
    """A name of ``entry`` (a new id, display name or alias) that another card has already."""
    owner = known or name
    given: list[tuple[str, Any, str]] = [] if known else [(name, name, "id")]
    given.append((f"{name}.display", entry.get("display"), "display name"))
    aliases = entry.get("aliases")
    for index, alias in enumerate(aliases if isinstance(aliases, list) else []):
        given.append((f"{name}.aliases[{index}]", alias, "alias"))
    for key, text, what in given:
        folded = normalise_name(text) if isinstance(text, str) else ""
        holder = taken.setdefault(folded, (owner, f"devices.{name}")) if folded else None
        if holder is None or holder[0] == owner:
            continue
        if holder[1].startswith("the catalog's"):
            return key, (
                f"{text!r} already names {holder[1]}: to change that card's figures write "
                f"[devices.{holder[0]}]; else drop the {what}"
            )
        return key, (
            f"{text!r} already names {holder[1]}: a report printing it would be judged on "
            "one of the two; keep it on one"
        )
    return None
