"""Which stored cards a comparison's ``--devices`` names mean, and the error when none does."""

from __future__ import annotations

from collections.abc import Sequence

from rules import Catalog, normalise_name
from service.errors import BadInput
from service.store.devices import DeviceRuns


def _unknown(name: str, known: Sequence[str], catalog: Catalog, repo: str) -> BadInput:
    """One clear error for a ``--devices`` name: the card, and the nearest known names."""
    spec = catalog.find(name)
    if spec is not None:
        return BadInput(
            f"--devices: {spec.id} has no base-branch history in {repo}; "
            f"cards with history: {', '.join(known) or 'none'}"
        )
    near = [*catalog.suggest(name), *(k for k in known if name.lower() in k.lower())]
    hint = f"; closest known: {', '.join(dict.fromkeys(near))}" if near else ""
    return BadInput(f"--devices: unknown card {name!r}{hint} (see `roofguard devices`)")


def resolve_devices(
    names: Sequence[str], stored: Sequence[DeviceRuns], catalog: Catalog, repo: str
) -> list[str]:
    """The stored cards ``names`` mean (catalog ids, aliases or stored names), in order.

    Raises:
        BadInput: No card has history here, or a name is none of them; the error names
            it and the nearest.
    """
    known = [d.device for d in sorted(stored, key=lambda d: (d.newest, d.device))]
    if not known:  # a repository named wrong read as an empty table
        raise BadInput(
            f"--repo: {repo} has no base-branch run in the history store (nightly runs "
            "stored by `roofguard check --kind nightly` or `roofguard ingest`)"
        )
    if not names:
        return known
    found = []
    for name in names:
        match = match_device(name, known, catalog)
        if match is None:
            raise _unknown(name, known, catalog, repo)
        found.append(match)
    return list(dict.fromkeys(found))


def match_device(name: str, known: Sequence[str], catalog: Catalog) -> str | None:
    """The stored card ``name`` means: itself, its catalog id, or the one it begins.

    ``A100`` is the ``A100-SXM4-80GB`` in a fleet whose only A100 is that one.
    """
    spec = catalog.find(name)
    if name in known or (spec is not None and spec.id in known):
        return name if name in known else spec.id if spec else None
    folded = normalise_name(name)
    hits = [k for k in known if folded and normalise_name(k).startswith(folded)]
    return hits[0] if len(hits) == 1 else None
