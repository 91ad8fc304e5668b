"""repository names are unique whatever their letter case

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 22:40:00

GitHub's names ignore case, and lookups did too, but only the exact name was unique: two
concurrent first uploads as ``Acme/K`` and ``acme/k`` (PostgreSQL, read committed) could
each find nothing and store a repository of its own, and the later one's runs were then
never found. Such twins are merged into the oldest row first: a run stored under both keeps
the older copy, a kernel known under both keeps the older id, and tokens and acceptances
move over. The logic is written out here, not imported, so that it never changes meaning.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None

INDEX = 'uq_repositories_name_lower'

_meta = sa.MetaData()
_repos = sa.Table('repositories', _meta, sa.Column('id', sa.Integer), sa.Column('name', sa.String))
_runs = sa.Table(
    'runs', _meta, sa.Column('id', sa.Integer), sa.Column('repo_id', sa.Integer),
    sa.Column('content_hash', sa.String),
)
_kernels = sa.Table(
    'kernels', _meta, sa.Column('id', sa.Integer), sa.Column('repo_id', sa.Integer),
    sa.Column('key_hash', sa.String),
)
_measurements = sa.Table(
    'measurements', _meta, sa.Column('run_id', sa.Integer), sa.Column('kernel_id', sa.Integer)
)
_acceptances = sa.Table(
    'baseline_acceptances', _meta, sa.Column('repo_id', sa.Integer),
    sa.Column('run_id', sa.Integer),
)
_tokens = sa.Table('api_tokens', _meta, sa.Column('repo_id', sa.Integer))
#: Tables whose rows belong to one run and go with it.
_RUN_CHILDREN = ('measurements', 'findings', 'rendered_views', 'gate_levels')


def _twins(conn: sa.Connection) -> list[tuple[int, int]]:
    """(kept, duplicate) repository ids: the oldest row of each lower-case name is kept."""
    by_name: dict[str, int] = {}
    pairs = []
    for repo_id, name in conn.execute(sa.select(_repos.c.id, _repos.c.name).order_by(_repos.c.id)):
        kept = by_name.setdefault(name.lower(), repo_id)
        if kept != repo_id:
            pairs.append((kept, repo_id))
    return pairs


def _same(conn: sa.Connection, table: sa.Table, column: str, kept: int, dup: int) -> dict[int, int]:
    """Rows of repository ``dup`` whose ``column`` a row of ``kept`` has too (dup id -> kept id)."""
    mine, theirs = table.alias(), table.alias()
    stmt = (
        sa.select(theirs.c.id, mine.c.id)
        .join(mine, mine.c[column] == theirs.c[column])
        .where(mine.c.repo_id == kept, theirs.c.repo_id == dup)
    )
    return {int(a): int(b) for a, b in conn.execute(stmt)}


def _merge_runs(conn: sa.Connection, kept: int, dup: int) -> None:
    for twin, older in _same(conn, _runs, 'content_hash', kept, dup).items():
        conn.execute(sa.update(_acceptances).where(_acceptances.c.run_id == twin).values(run_id=older))
        for child in _RUN_CHILDREN:
            conn.execute(sa.text(f'DELETE FROM {child} WHERE run_id = :run'), {'run': twin})
        conn.execute(sa.delete(_runs).where(_runs.c.id == twin))
    conn.execute(sa.update(_runs).where(_runs.c.repo_id == dup).values(repo_id=kept))


def _merge_kernels(conn: sa.Connection, kept: int, dup: int) -> None:
    for twin, older in _same(conn, _kernels, 'key_hash', kept, dup).items():
        conn.execute(
            sa.update(_measurements).where(_measurements.c.kernel_id == twin).values(kernel_id=older)
        )
        conn.execute(sa.delete(_kernels).where(_kernels.c.id == twin))
    conn.execute(sa.update(_kernels).where(_kernels.c.repo_id == dup).values(repo_id=kept))


def upgrade() -> None:
    conn = op.get_bind()
    for kept, dup in _twins(conn):
        _merge_runs(conn, kept, dup)  # runs first: a twin run's measurements go with it
        _merge_kernels(conn, kept, dup)
        for table in (_acceptances, _tokens):
            conn.execute(sa.update(table).where(table.c.repo_id == dup).values(repo_id=kept))
        conn.execute(sa.delete(_repos).where(_repos.c.id == dup))
    op.create_index(INDEX, 'repositories', [sa.text('lower(name)')], unique=True)


def downgrade() -> None:
    """Drops the index; merged repositories stay merged."""
    op.drop_index(INDEX, table_name='repositories')
