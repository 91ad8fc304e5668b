"""runs are identified by content: no timestamp, no machine-local paths

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 09:40:00

Earlier content hashes covered the run's timestamp and the paths its files were read from,
so a CI re-run or a retried upload stored a second run. Each stored record loses its paths
(file names stay) and gets the new hash, taken without timestamp and file names. Runs that were stored twice because of that keep a
hash of their own (their id mixed in), so the first one is what a new upload finds. The
logic is written out here, not imported, so that this migration never changes meaning.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import PurePosixPath
from typing import Any

import sqlalchemy as sa
from alembic import op


revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None

_BATCH = 200


def _name(source: object, keep: bool) -> None:
    path = source.get("path") if isinstance(source, dict) else None
    if isinstance(source, dict) and isinstance(path, str):
        source["path"] = (PurePosixPath(path.replace("\\", "/")).name or path) if keep else ""


def _dumps(data: object) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def _paths(data: dict[str, Any], keep: bool) -> None:
    """File names instead of paths (``keep``), or no name at all (what is hashed)."""
    for source in data.get("sources") or ():
        _name(source, keep)
    for kernel in data.get("kernels") or ():
        _name(kernel.get("source"), keep)


def _identity(record_json: str) -> tuple[str, str]:
    data = json.loads(record_json)
    _paths(data, keep=True)
    record = _dumps(data)
    data.pop("timestamp", None)
    _paths(data, keep=False)
    return record, hashlib.sha256(_dumps(data).encode("utf-8")).hexdigest()


def upgrade() -> None:
    conn = op.get_bind()
    runs = sa.table(
        'runs',
        sa.column('id', sa.Integer),
        sa.column('repo_id', sa.Integer),
        sa.column('content_hash', sa.String),
        sa.column('record_json', sa.Text),
    )
    seen: set[tuple[int, str]] = set()
    last = 0
    while True:
        batch = conn.execute(
            sa.select(runs.c.id, runs.c.repo_id, runs.c.record_json)
            .where(runs.c.id > last)
            .order_by(runs.c.id)
            .limit(_BATCH)
        ).all()
        if not batch:
            break
        for run_id, repo_id, record_json in batch:
            record, digest = _identity(record_json)
            if (repo_id, digest) in seen:  # stored twice before: the first run is the one
                digest = hashlib.sha256(f"{digest}:{run_id}".encode()).hexdigest()
            seen.add((repo_id, digest))
            conn.execute(
                sa.update(runs)
                .where(runs.c.id == run_id)
                .values(content_hash=digest, record_json=record)
            )
        last = batch[-1][0]


def downgrade() -> None:
    """Nothing to undo: the old hashes cannot be recomputed without the old paths."""
