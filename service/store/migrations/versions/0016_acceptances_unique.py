"""a change is accepted once: one acceptance per repository, kernel, card and run

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-08 09:00:00

``/roofguard accept`` looked for the run's acceptance of the kernel on the card, then
inserted one: two deliveries of the same accept at once (a webhook retried, two replicas)
could each find none and both store it, under PostgreSQL's read committed. Nothing in the
database held it once. ``uq_acceptances_run`` does now, for the acceptances of a run (a
work model's edit, with no run, is recorded once by its run's ingest); ``coalesce`` makes
an acceptance for every card (no device) one key too, since NULLs never collide. Twins
stored before are dropped first, the earliest kept: the one the first answer named, whose
time the baseline restarts after. The logic is written out here, not imported, so that it
never changes meaning.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None

INDEX = 'uq_acceptances_run'
RUN_ACCEPTANCE = sa.text('run_id IS NOT NULL')

_acceptances = sa.Table(
    'baseline_acceptances', sa.MetaData(),
    sa.Column('id', sa.Integer), sa.Column('repo_id', sa.Integer),
    sa.Column('device_id', sa.Integer), sa.Column('kernel_key_hash', sa.String),
    sa.Column('run_id', sa.Integer), sa.Column('created_at', sa.DateTime(timezone=True)),
)


def _twins(conn: sa.Connection) -> list[int]:
    """Ids of the run acceptances a key holds already: each key's earliest row is kept."""
    a = _acceptances.c
    rows = conn.execute(
        sa.select(a.id, a.repo_id, a.device_id, a.kernel_key_hash, a.run_id)
        .where(a.run_id.is_not(None))
        .order_by(a.created_at, a.id)
    )
    seen: set[tuple[object, ...]] = set()
    twins = []
    for row_id, *key in rows:
        if tuple(key) in seen:
            twins.append(row_id)
        seen.add(tuple(key))
    return twins


def upgrade() -> None:
    conn = op.get_bind()
    twins = _twins(conn)
    for start in range(0, len(twins), 500):
        ids = twins[start:start + 500]
        conn.execute(sa.delete(_acceptances).where(_acceptances.c.id.in_(ids)))
    op.create_index(
        INDEX,
        'baseline_acceptances',
        ['repo_id', 'kernel_key_hash', 'run_id', sa.text('coalesce(device_id, 0)')],
        unique=True,
        sqlite_where=RUN_ACCEPTANCE,
        postgresql_where=RUN_ACCEPTANCE,
    )


def downgrade() -> None:
    """Drops the index; twins dropped stay dropped."""
    op.drop_index(INDEX, table_name='baseline_acceptances')
