"""webhook deliveries (replay protection shared by every replica)

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 07:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('webhook_deliveries',
    sa.Column('delivery_id', sa.String(length=100), nullable=False),
    sa.Column('event', sa.String(length=64), nullable=False),
    sa.Column('received_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('delivery_id', name=op.f('pk_webhook_deliveries'))
    )
    op.create_index('ix_webhook_deliveries_received_at', 'webhook_deliveries', ['received_at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_webhook_deliveries_received_at', table_name='webhook_deliveries')
    op.drop_table('webhook_deliveries')
