"""ingest inputs: the same files and flags find their stored run without being read

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06 14:10:00

``roofguard ingest`` of a file stored already read and hashed it whole before it could say
so: 12.9 s for a million-launch ncu page. ``ingest_inputs`` keeps a digest of what an ingest
was given (roofguard's version, the collector plugins, the flags but the timestamp, the
config, the limits and the files' bytes) beside the run it stored and that run's content
hash, which a lookup checks (a run deleted by hand, its id reused). Nothing is filled in for
runs stored before: their next ingest reads the files once, as before, and remembers them.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('ingest_inputs',
    sa.Column('input_digest', sa.String(length=64), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_ingest_inputs_run_id_runs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('input_digest', name=op.f('pk_ingest_inputs'))
    )
    op.create_index(op.f('ix_ingest_inputs_run_id'), 'ingest_inputs', ['run_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_ingest_inputs_run_id'), table_name='ingest_inputs')
    op.drop_table('ingest_inputs')
