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
) -> tuple[Roof, list[CompareRow]]:
    """The target's roof and one forecast row per kernel of ``rows``.

    Raises:
        BadInput: The card is unknown, or lacks the peak or bandwidth a kernel's work needs.
    """
    target = target_roof(name, catalog)
    found = []
    for key in dict.fromkeys(r.kernel for r in rows):
        card = _source(cards, key)
        if card is None:
            continue
        level = card.levels[key]
        try:
            ahead = forecast(level, card.roof, target)
        except MissingResource as exc:
            raise _missing(exc, key, card.label, catalog) from None
        if ahead is None:
            continue
        found.append(
            CompareRow(
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
        )
    return target, found
