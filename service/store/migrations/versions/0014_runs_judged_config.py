"""a run records the configuration its stored verdict was judged with

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06 21:00:00

``roofguard check`` of a run stored before keeps the verdict stored then (a re-run CI job
gets the same answer, and re-measurements' confirmations are not undone). A job re-run after
``roofguard.toml`` changed (a rule selected again, a declared regime fixed) kept the old gate
too. ``runs.judged_config`` is the sha256 of the configuration the stored verdict was judged
with; a check under another one judges the run again. NULL (runs judged before this
migration, or stored by ``ingest``): the stored verdict is kept, as before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('runs', sa.Column('judged_config', sa.String(length=64), nullable=True))


def downgrade() -> None:
    op.drop_column('runs', 'judged_config')
