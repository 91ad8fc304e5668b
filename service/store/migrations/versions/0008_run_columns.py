"""a baseline run's measurements kept as columns (service.store.columnar)

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03 16:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('run_columns',
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('layout', sa.Integer(), nullable=False),
    sa.Column('kernels', sa.Integer(), nullable=False),
    sa.Column('numbers', sa.LargeBinary(), nullable=False),
    sa.Column('labels', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_run_columns_run_id_runs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('run_id', name=op.f('pk_run_columns'))
    )


def downgrade() -> None:
    op.drop_table('run_columns')
