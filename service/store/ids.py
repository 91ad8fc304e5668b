"""Identities in the history store: content hashes, key hashes and get-or-create of ids.

Ids are resolved with Core statements, a whole run's kernels at a time; creation uses
``INSERT ... ON CONFLICT DO NOTHING`` so two processes ingesting at once cannot collide.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session

from collectors.schema import RunRecord
from service.store.rows import KernelValues, NamedValues
from service.store.tables import Device, Kernel, Repository, table_of

_REPOS = table_of(Repository)
_DEVICES = table_of(Device)
_KERNELS = table_of(Kernel)


def canonical_json(run: RunRecord) -> str:
    """The canonical JSON of a run: sorted keys, no whitespace (what the hash is taken of)."""
    return json.dumps(run.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))


def content_hash(run: RunRecord) -> str:
    """sha256 of ``canonical_json(run)``."""
    return hashlib.sha256(canonical_json(run).encode("utf-8")).hexdigest()


def key_hash(key: str) -> str:
    """sha256 of a kernel identity key (what uniqueness is enforced on)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def as_utc(ts: datetime) -> datetime:
    """A timezone-aware UTC datetime (naive values are taken as UTC, as SQLite returns them)."""
    return ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)


def _insert_ignore(
    session: Session, table: sa.Table, rows: Sequence[NamedValues] | Sequence[KernelValues]
) -> None:
    """Insert rows, skipping those that collide with a unique key (safe under concurrency)."""
    if not rows:
        return
    dialect = session.get_bind().dialect.name
    stmt: Any
    if dialect == "postgresql":
        stmt = postgresql.insert(table).on_conflict_do_nothing()
    elif dialect == "sqlite":
        stmt = sqlite.insert(table).on_conflict_do_nothing()
    else:
        stmt = sa.insert(table).prefix_with("IGNORE") if dialect == "mysql" else sa.insert(table)
    session.execute(stmt, list(rows))


def _named_id(session: Session, table: sa.Table, name: str) -> int:
    """Id of the row called ``name`` in repositories or devices, created when missing."""
    found = session.execute(sa.select(table.c.id).where(table.c.name == name)).scalar()
    if found is None:
        row: NamedValues = {"name": name, "created_at": datetime.now(UTC)}
        _insert_ignore(session, table, [row])
        found = session.execute(sa.select(table.c.id).where(table.c.name == name)).scalar_one()
    return int(found)


def repo_id(*, session: Session, repo: str, create: bool = False) -> int | None:
    """Id of repository ``repo`` (created when ``create``), None when unknown."""
    if create:
        return _named_id(session, _REPOS, repo)
    found = session.execute(sa.select(_REPOS.c.id).where(_REPOS.c.name == repo)).scalar()
    return None if found is None else int(found)


def device_id(*, session: Session, device: str, create: bool = False) -> int | None:
    """Id of device ``device`` (created when ``create``), None when unknown."""
    if create:
        return _named_id(session, _DEVICES, device)
    found = session.execute(sa.select(_DEVICES.c.id).where(_DEVICES.c.name == device)).scalar()
    return None if found is None else int(found)


def kernel_ids(
    *, session: Session, repo_id: int, kernels: Mapping[str, str], create: bool = True
) -> dict[str, int]:
    """Ids of kernels by identity key (``kernels`` maps key -> display name)."""
    hashes = {key_hash(k): k for k in kernels}
    ids = _kernel_ids_by_hash(session, repo_id, list(hashes))
    missing = [h for h in hashes if h not in ids]
    if create and missing:
        rows: list[KernelValues] = [
            {"repo_id": repo_id, "key": hashes[h], "key_hash": h, "name": kernels[hashes[h]]}
            for h in missing
        ]
        _insert_ignore(session, _KERNELS, rows)
        ids.update(_kernel_ids_by_hash(session, repo_id, missing))
    return {hashes[h]: i for h, i in ids.items()}


def _kernel_ids_by_hash(session: Session, repo_id: int, hashes: list[str]) -> dict[str, int]:
    table = _KERNELS
    found: dict[str, int] = {}
    for start in range(0, len(hashes), 5000):  # stay below every driver's parameter limit
        chunk = hashes[start : start + 5000]
        stmt = sa.select(table.c.key_hash, table.c.id).where(
            table.c.repo_id == repo_id, table.c.key_hash.in_(chunk)
        )
        found.update({h: int(i) for h, i in session.execute(stmt)})
    return found
