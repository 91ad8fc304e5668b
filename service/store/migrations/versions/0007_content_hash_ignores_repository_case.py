"""a run's content hash ignores the letter case of its repository's name

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03 13:30:00

``ingest F --repo idem/cli`` and then ``--repo IDEM/CLI`` stored two runs: the repository
was one (0006), but the content hash took the name as spelt. The hash now takes it in lower
case (``service.store.ids.identity``); each run whose stored record names its repository
with a capital letter gets its hash anew, and of two runs of one repository that are then
twins the newer goes (with its measurements, findings, views and levels; an
acceptance of it moves to the older run). The logic is written out here, not imported, so
that it never changes meaning.
"""

from __future__ import annotations

import hashlib
import json

import sqlalchemy as sa
from alembic import op


revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None

_meta = sa.MetaData()
_runs = sa.Table(
    'runs', _meta, sa.Column('id', sa.Integer), sa.Column('repo_id', sa.Integer),
    sa.Column('content_hash', sa.String), sa.Column('record_json', sa.Text),
)
_acceptances = sa.Table(
    'baseline_acceptances', _meta, sa.Column('run_id', sa.Integer),
)
_RUN_CHILDREN = ('measurements', 'findings', 'rendered_views', 'gate_levels')


def _dumps(data: object) -> str:
    return json.dumps(data, sort_keys=True, separators=(',', ':'))


def _hash(record_json: str) -> str | None:
    """The content hash of a stored record, repository in lower case; None when unchanged."""
    data = json.loads(record_json)
    repo = data.get('repo')
    if not isinstance(repo, str) or repo == repo.lower():
        return None
    data.pop('timestamp', None)
    data['repo'] = repo.lower()
    for source in data.get('sources', []):
        source['path'] = ''
    for kernel in data.get('kernels', []):
        if kernel.get('source'):
            kernel['source']['path'] = ''
    return hashlib.sha256(_dumps(data).encode('utf-8')).hexdigest()


def _drop(conn: sa.Connection, twin: int, older: int) -> None:
    conn.execute(sa.update(_acceptances).where(_acceptances.c.run_id == twin).values(run_id=older))
    for child in _RUN_CHILDREN:
        conn.execute(sa.text(f'DELETE FROM {child} WHERE run_id = :run'), {'run': twin})
    conn.execute(sa.delete(_runs).where(_runs.c.id == twin))


def upgrade() -> None:
    conn = op.get_bind()
    stmt = sa.select(_runs.c.id, _runs.c.repo_id, _runs.c.record_json).order_by(_runs.c.id)
    for run_id, repo_id, record_json in list(conn.execute(stmt)):
        digest = _hash(record_json)
        if digest is None:
            continue
        found = sa.select(_runs.c.id).where(
            _runs.c.repo_id == repo_id, _runs.c.content_hash == digest, _runs.c.id != run_id
        )
        other = conn.execute(found.order_by(_runs.c.id).limit(1)).scalar()
        if other is not None and int(other) < run_id:
            _drop(conn, run_id, int(other))  # the older copy stays
            continue
        if other is not None:
            _drop(conn, int(other), run_id)
        conn.execute(sa.update(_runs).where(_runs.c.id == run_id).values(content_hash=digest))


def downgrade() -> None:
    """Hashes stay as they are: a lower-case name hashes alike under either rule."""
