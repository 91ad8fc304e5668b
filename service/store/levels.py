"""The gate's base-branch levels in the store (``rules.levelstore`` says why and what).

One row per level, under its digest and the newest run of the history it was computed from.
A check loads the levels of its baseline's newest run before the rules run and stores the
ones it computed after, in its own transaction: a failed check leaves none, and two checks
that compute the same level at once both succeed (the second insert is skipped). Levels are
kept for the runs of the last ``KEPT_DAYS`` days: a PR whose merge base is older computes its
levels, as every PR did before they were stored (kept for good they would grow the store by
about as many rows as the measurements).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import fields
from datetime import timedelta
from functools import cache
from importlib import resources

import sqlalchemy as sa

from rules import StoredLevels
from rules.stats import Level
from service.store.coretables import GATE_LEVELS as _LEVELS
from service.store.coretables import RUNS as _RUNS
from service.store.ids import insert_ignore
from service.store.sessions import StoreSession

_FIELDS = tuple(f.name for f in fields(Level))
#: Days of runs whose levels are kept, counted back from the newest run that stores some.
KEPT_DAYS = 30


@cache
def gate_code() -> bytes:
    """A digest of the statistics' source (``rules.stats``): a changed gate misses every level."""
    digest = hashlib.blake2b(digest_size=16)
    package = resources.files("rules.stats")
    for name in sorted(p.name for p in package.iterdir() if p.name.endswith(".py")):
        digest.update(package.joinpath(name).read_bytes())
    return digest.digest()


def load_levels(session: StoreSession, run_id: int) -> StoredLevels:
    """The levels stored under ``run_id``, as a check's rules read them."""
    columns = [_LEVELS.c[name] for name in _FIELDS]
    query = sa.select(_LEVELS.c.digest, *columns).where(_LEVELS.c.run_id == run_id)
    known = {digest: Level(*values) for digest, *values in session.execute(query)}
    return StoredLevels(code=gate_code(), known=known)


def save_levels(session: StoreSession, run_id: int, levels: Mapping[str, Level]) -> None:
    """Store ``levels`` under ``run_id``, and let old runs' levels go.

    ``levels``: by digest, those the check computed (``Evaluation.levels_to_store``).
    """
    rows = [
        {"digest": d, "run_id": run_id, **{f: getattr(level, f) for f in _FIELDS}}
        for d, level in levels.items()
    ]
    if not rows:
        return
    insert_ignore(session, _LEVELS, rows)
    _forget_old(session, run_id)


def _forget_old(session: StoreSession, run_id: int) -> None:
    """Delete the levels of the repository's runs on this device older than ``KEPT_DAYS``."""
    me = session.execute(
        sa.select(_RUNS.c.repo_id, _RUNS.c.device_id, _RUNS.c.timestamp).where(_RUNS.c.id == run_id)
    ).one()
    old = sa.select(_RUNS.c.id).where(
        _RUNS.c.repo_id == me.repo_id,
        _RUNS.c.device_id == me.device_id,
        _RUNS.c.timestamp < me.timestamp - timedelta(days=KEPT_DAYS),
    )
    session.execute(sa.delete(_LEVELS).where(_LEVELS.c.run_id.in_(old)))
