"""large run records are kept compressed

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03 23:00:00

A run's record (its canonical JSON) is about 880 bytes a kernel: one text value of 880 MB
for a million kernels. From 1 MiB it is now kept zlib-compressed in ``runs.record_zlib``,
with ``record_json`` empty (``service.store.runrecord``); rows stored before keep their text
and read as before, so the upgrade adds the column only. The downgrade writes each
compressed record back as text, one run at a time, before dropping the column.
"""

from __future__ import annotations

import zlib

import sqlalchemy as sa
from alembic import op


revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None

_runs = sa.table(
    'runs', sa.column('id', sa.Integer), sa.column('record_json', sa.Text),
    sa.column('record_zlib', sa.LargeBinary),
)


def upgrade() -> None:
    op.add_column('runs', sa.Column('record_zlib', sa.LargeBinary(), nullable=True))
    if op.get_bind().dialect.name == 'postgresql':
        # Already compressed: PostgreSQL need not try to compress it again.
        op.execute("ALTER TABLE runs ALTER COLUMN record_zlib SET STORAGE EXTERNAL")


def downgrade() -> None:
    conn = op.get_bind()
    packed = sa.select(_runs.c.id).where(_runs.c.record_zlib.is_not(None)).order_by(_runs.c.id)
    for run_id in list(conn.execute(packed).scalars()):
        data = conn.execute(sa.select(_runs.c.record_zlib).where(_runs.c.id == run_id)).scalar_one()
        text = zlib.decompress(data).decode()
        conn.execute(_runs.update().where(_runs.c.id == run_id).values(record_json=text))
    op.drop_column('runs', 'record_zlib')
