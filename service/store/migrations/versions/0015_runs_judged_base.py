"""a run records the baseline its stored verdict was judged against

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-07 09:00:00

An upload's ``base_branch`` and ``base_sha``/``base_time`` (``check``'s ``--base-branch``,
``--base-sha``, ``--base-time``) chose the baseline of its verdict, and nothing kept them:
the run's page, its API verdict and the same upload again judged it against the configured
branch's newest runs, beside findings stored from the other baseline (a 15x regression
shown unchanged). ``runs.judged_base_branch``, ``judged_base_sha`` and ``judged_base_time``
keep them with the stored findings. NULL branch (runs judged before this migration, or
stored by ``ingest``): judged again against the configured branch, as before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('runs', sa.Column('judged_base_branch', sa.Text(), nullable=True))
    op.add_column('runs', sa.Column('judged_base_sha', sa.String(length=64), nullable=True))
    op.add_column('runs', sa.Column('judged_base_time', sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column('runs', 'judged_base_time')
    op.drop_column('runs', 'judged_base_sha')
    op.drop_column('runs', 'judged_base_branch')
