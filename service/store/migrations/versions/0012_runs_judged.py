"""a run records whether its check judged anything

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05 08:00:00

A run checked with no baseline, or one shorter than the gate's ``min_runs``, stores its
kernels and judges none; its stored findings alone read as a pass. ``runs.judged`` keeps
what its check concluded: True, or False where it judged nothing, so the dashboard's list
can say "not judged". NULL is a run stored without a check (``roofguard ingest``): it has no
stored verdict, so its page judges it against the runs before it instead of reading "no
findings" as a pass. Runs stored before this migration are marked True: they read from their
stored findings as before.
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
    op.execute(sa.text("UPDATE runs SET judged = :judged").bindparams(judged=True))


def downgrade() -> None:
    op.drop_column('runs', 'judged')
