"""the gate's stored base-branch levels

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 17:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('gate_levels',
    sa.Column('digest', sa.String(length=32), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('level', sa.Float(), nullable=False),
    sa.Column('noise', sa.Float(), nullable=False),
    sa.Column('n', sa.Integer(), nullable=False),
    sa.Column('start', sa.Integer(), nullable=False),
    sa.Column('se', sa.Float(), nullable=False),
    sa.Column('points', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_gate_levels_run_id_runs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('digest', name=op.f('pk_gate_levels'))
    )
    op.create_index(op.f('ix_gate_levels_run_id'), 'gate_levels', ['run_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_gate_levels_run_id'), table_name='gate_levels')
    op.drop_table('gate_levels')
