"""upload claims keep their answer compressed

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03 19:05:00

An answered claim kept the verdict's JSON as text (about 3.3 MB for a 2,000-kernel run) for
a day. The answer is now zlib-compressed bytes, kept an hour (``service.store.claims``).
Answered claims are a cache for the retries of their uploads: the upgrade and the downgrade
drop them (an upload after that is judged anew and finds its run stored), and keep the
pending ones.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("DELETE FROM upload_claims WHERE answer_json IS NOT NULL")
    # Plain ALTERs (SQLite >= 3.35 drops a column): batch mode would rebuild the table and
    # reflect its neighbours, whose expression index SQLAlchemy warns it cannot reflect.
    op.add_column('upload_claims', sa.Column('answer', sa.LargeBinary(), nullable=True))
    op.drop_column('upload_claims', 'answer_json')


def downgrade() -> None:
    op.execute("DELETE FROM upload_claims WHERE answer IS NOT NULL")
    op.add_column('upload_claims', sa.Column('answer_json', sa.Text(), nullable=True))
    op.drop_column('upload_claims', 'answer')
