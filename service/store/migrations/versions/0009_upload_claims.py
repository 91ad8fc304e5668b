"""upload claims: one check per upload across every replica of the service

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03 16:10:00

Two replicas receiving the same upload each judged it (the run was stored once, by the
content hash, but the check ran twice and a retry could not find the first one's verdict).
The claim's primary key now decides which replica judges an upload; the others wait for
the answer stored with it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('upload_claims',
    sa.Column('upload_key', sa.String(length=64), nullable=False),
    sa.Column('repo', sa.String(length=200), nullable=False),
    sa.Column('owner', sa.String(length=64), nullable=False),
    sa.Column('claimed_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('lease_until', sa.DateTime(timezone=True), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=True),
    sa.Column('answer_json', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_upload_claims_run_id_runs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('upload_key', name=op.f('pk_upload_claims'))
    )
    op.create_index('ix_upload_claims_claimed_at', 'upload_claims', ['claimed_at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_upload_claims_claimed_at', table_name='upload_claims')
    op.drop_table('upload_claims')
