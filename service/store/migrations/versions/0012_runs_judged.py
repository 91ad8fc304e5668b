"""a run records whether its check judged anything

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05 08:00:00

A run checked with no baseline, or one shorter than the gate's ``min_runs``, stores its
kernels and judges none; its stored findings alone read as a pass. ``runs.judged`` keeps
what the check concluded so the dashboard's list can say "not judged". Runs stored before,
and runs stored by ``ingest`` (which judges nothing and stores no findings), keep NULL: they
read from their findings as before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('runs', sa.Column('judged', sa.Boolean(), nullable=True))


def downgrade() -> None:
    op.drop_column('runs', 'judged')
