"""webhook replays by body hash; rendered views of runs

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 09:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('webhook_deliveries') as batch:
        batch.add_column(sa.Column('payload_hash', sa.String(length=64), nullable=True))
        batch.create_unique_constraint(
            op.f('uq_webhook_deliveries_payload_hash'), ['payload_hash']
        )
    op.create_table('rendered_views',
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('view', sa.String(length=32), nullable=False),
    sa.Column('cache_key', sa.String(length=64), nullable=False),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_rendered_views_run_id_runs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('run_id', 'view', name=op.f('pk_rendered_views'))
    )


def downgrade() -> None:
    op.drop_table('rendered_views')
    with op.batch_alter_table('webhook_deliveries') as batch:
        batch.drop_constraint(op.f('uq_webhook_deliveries_payload_hash'), type_='unique')
        batch.drop_column('payload_hash')
