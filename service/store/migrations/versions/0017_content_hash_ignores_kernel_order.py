"""a run's content hash takes its kernels in no order

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-09 09:00:00

The same run uploaded with its kernels in another order (a JSON upload, a report exported
again) stored a second run: the hash took the kernels in the order listed. It now takes
the sha256 of each kernel's JSON, sorted (``service.store.ids.identity``); each run's hash
is computed anew from its stored record, and so is the hash its ingest inputs were kept
with (``ingest_inputs``). Of runs stored twice that way, the first takes the new hash and
the others keep the old one: the first is what a new upload finds, and what the others
were judged against stays. The logic is written out here, not imported, so that it never
changes meaning.
"""

from __future__ import annotations

import hashlib
import json
import zlib

import sqlalchemy as sa
from alembic import op


revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None

_meta = sa.MetaData()
_runs = sa.Table(
    'runs', _meta, sa.Column('id', sa.Integer), sa.Column('repo_id', sa.Integer),
    sa.Column('content_hash', sa.String), sa.Column('record_json', sa.Text),
    sa.Column('record_zlib', sa.LargeBinary),
)
_inputs = sa.Table(
    'ingest_inputs', _meta, sa.Column('run_id', sa.Integer), sa.Column('content_hash', sa.String),
)
_MARK = 'kernels-0017-d1c6a0f2e5b84c3a9e7f'  # where the kernels go: a value no run holds


def _dumps(data: object) -> str:
    return json.dumps(data, sort_keys=True, separators=(',', ':'))


def _hash(record: str | bytes) -> str:
    """The content hash of a stored record: kernels' digests and notes sorted, no time or place."""
    data = json.loads(record)
    data.pop('timestamp', None)
    repo = data.get('repo')
    data['repo'] = repo.lower() if isinstance(repo, str) else repo
    for source in data.get('sources') or ():
        source['path'] = ''
    data['notes'] = sorted(data.get('notes') or ())
    digests = []
    for kernel in data.pop('kernels', None) or ():
        if kernel.get('source'):
            kernel['source'].update(path='', row=None)
        digests.append(hashlib.sha256(_dumps(kernel).encode()).digest())
    data['kernels'] = _MARK
    head, tail = _dumps(data).split(_dumps(_MARK))
    digest = hashlib.sha256(f'{head}['.encode())
    digest.update(b''.join(sorted(digests)))
    digest.update(f']{tail}'.encode())
    return digest.hexdigest()


def _record(conn: sa.Connection, run_id: int) -> str | bytes:
    text, packed = conn.execute(
        sa.select(_runs.c.record_json, _runs.c.record_zlib).where(_runs.c.id == run_id)
    ).one()
    return text if packed is None else zlib.decompress(packed)


def upgrade() -> None:
    conn = op.get_bind()
    runs = list(conn.execute(sa.select(_runs.c.id, _runs.c.repo_id).order_by(_runs.c.id)))
    for run_id, repo_id in runs:  # one record at a time: a large one is hundreds of MB
        digest = _hash(_record(conn, run_id))
        taken = sa.select(_runs.c.id).where(
            _runs.c.repo_id == repo_id, _runs.c.content_hash == digest, _runs.c.id != run_id
        )
        if conn.execute(taken.limit(1)).scalar() is not None:
            continue  # an earlier run has this content: this one keeps its old hash
        conn.execute(sa.update(_runs).where(_runs.c.id == run_id).values(content_hash=digest))
        conn.execute(
            sa.update(_inputs).where(_inputs.c.run_id == run_id).values(content_hash=digest)
        )


def downgrade() -> None:
    """Hashes stay as they are: an older roofguard stores a run uploaded again once more."""
