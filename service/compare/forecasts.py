"""``roofguard compare --forecast CARD``: every kernel's time on a card it never ran on.

If a kernel kept its percent of roof, its time on the target card is its work's roof time
there divided by that percent (``rules.forecast``): the same roofline that judges a device
change, run forwards. Each kernel is forecast from the last card shown that has a level of
it (the newest fleet, when the cards are in their default order).
"""

from __future__ import annotations

from collections.abc import Sequence

from rules import Catalog, DeviceSpec, MissingResource, Roof, UnknownDevice, forecast
from service.compare.cards import Card
from service.compare.model import FORECAST_ASSUMPTION, CompareRow
from service.errors import BadInput

#: How many nearest cards a missing-resource error names.
NEAREST = 3


def target_roof(name: str, catalog: Catalog) -> Roof:
    """The datasheet roof of the card ``name`` (catalog id, alias or printed name).

    Raises:
        BadInput: No such card; the error names the closest known ones.
    """
    try:
        return catalog.lookup(name).roof()
    except UnknownDevice as exc:
        raise BadInput(f"--forecast: {exc}") from None


def _has(spec: DeviceSpec, resource: str, kind: str) -> bool:
    table = spec.peak_flop_per_s if kind == "peak" else spec.bandwidth_byte_per_s
    return bool(table.get(resource))


def nearest_with(catalog: Catalog, device: str, resource: str, kind: str) -> list[str]:
    """The catalog cards nearest ``device`` (kinship, then name) that have ``resource``."""
    ranked = catalog.suggest(device, n=len(catalog.devices))
    ranked += sorted(set(catalog.devices) - set(ranked))
    return [d for d in ranked if _has(catalog.devices[d], resource, kind)][:NEAREST]


def _missing(exc: MissingResource, key: str, source: str, catalog: Catalog) -> BadInput:
    near = nearest_with(catalog, exc.device, exc.resource, exc.kind)
    return BadInput(
        f"--forecast: {exc.device} has no {exc.kind} for {exc.resource}, which kernel {key!r} "
        f"needs (its work on {source}); the nearest known cards with one: "
        f"{', '.join(near) or 'none'}"
    )


def _source(cards: Sequence[Card], key: str) -> Card | None:
    """The last card with a level of ``key``: one read from enough runs, if any has one."""
    having = [c for c in cards if key in c.levels]
    settled = [c for c in having if key not in c.few]
    chosen = settled or having
    return chosen[-1] if chosen else None


def forecast_rows(
    cards: Sequence[Card], rows: Sequence[CompareRow], name: str, catalog: Catalog
) -> tuple[Roof, list[CompareRow], str | None]:
    """The target's roof, one forecast row per kernel of ``rows`` it can place, and a note.

    The note names the kernels whose work needs a peak or bandwidth the card lacks (None:
    none): an elementwise kernel's few fp32 FLOPs on a card without an fp32 peak refused the
    whole table.

    Raises:
        BadInput: The card is unknown, or lacks what every kernel's work needs.
    """
    target = target_roof(name, catalog)
    measured = [card.label for card in cards if card.roof.device == target.device]
    if measured:  # its measured and forecast totals were one in the headline
        raise BadInput(
            f"--forecast: {target.device} has runs of its own ({measured[0]}): its kernels are "
            "measured there; forecast a card the repository never ran on"
        )
    found, missing = [], []
    for key in dict.fromkeys(r.kernel for r in rows):
        card = _source(cards, key)
        if card is None:
            continue
        try:
            row = _forecast_row(key, card, target)
        except MissingResource as exc:
            missing.append((key, card, exc))
            continue
        if row is not None:
            found.append(row)
    if missing and not found:
        first, source, refused = missing[0]
        raise _missing(refused, first, source.label, catalog)
    return target, found, _not_forecast(missing, catalog)


def _forecast_row(key: str, card: Card, target: Roof) -> CompareRow | None:
    """``key``'s row on ``target`` from its level on ``card`` (None: nothing to forecast).

    Raises:
        MissingResource: The target lacks a peak or bandwidth the work needs.
    """
    level = card.levels[key]
    ahead = forecast(level, card.roof, target, placed=card.roof_of(level))
    if ahead is None:
        return None
    return CompareRow(
        kernel=key,
        name=level.name,
        device=target.device,
        percent_of_roof=level.percent,
        time_s=ahead.time_s,
        binding=ahead.prediction.target_binding,
        runs=0,
        reference=card.label,
        time_ratio=ahead.time_ratio,
        expected_time_ratio=ahead.prediction.expected_time_ratio,
        forecast=True,
        source=card.label,
        assumption=FORECAST_ASSUMPTION.format(target=target.device, source=card.label),
    )


def _not_forecast(
    missing: Sequence[tuple[str, Card, MissingResource]], catalog: Catalog
) -> str | None:
    """``33 kernel(s) not forecast: B100 has no peak for fp32 (e.g. 'copy'); ...``."""
    if not missing:
        return None
    by_resource: dict[tuple[str, str, str], list[str]] = {}
    for key, _, exc in missing:
        by_resource.setdefault((exc.device, exc.kind, exc.resource), []).append(key)
    parts = []
    for (device, kind, resource), keys in by_resource.items():
        near = ", ".join(nearest_with(catalog, device, resource, kind)) or "none"
        parts.append(
            f"{len(keys)} kernel(s) not forecast: {device} has no {kind} for {resource}, which "
            f"their work needs (e.g. {keys[0]!r}; the nearest cards with one: {near})"
        )
    return "; ".join(parts)
