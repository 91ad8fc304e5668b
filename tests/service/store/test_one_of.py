"""``fastread.one_of``: the rows of ``column IN values`` on both backends, for ids and hashes."""

from __future__ import annotations

import sqlalchemy as sa
from both_backends import both_backends_engine

from service.store.coretables import KERNELS, REPOSITORIES
from service.store.fastread import one_of
from service.store.ids import key_hash

__all__ = ["both_backends_engine"]  # the fixture ``engine``


def _kernels(conn: sa.Connection, count: int) -> None:
    conn.execute(sa.insert(REPOSITORIES), [{"id": 1, "name": "acme/k"}])
    rows = [
        {"id": i, "repo_id": 1, "key": f"k{i}", "key_hash": key_hash(f"k{i}"), "name": f"k{i}"}
        for i in range(1, count + 1)
    ]
    conn.execute(sa.insert(KERNELS), rows)


def test_one_of_reads_the_rows_in_of_ids_and_hashes(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        _kernels(conn, 2500)
        wanted = list(range(3, 2500, 2))
        by_id = sa.select(KERNELS.c.key).where(one_of(conn, KERNELS.c.id, wanted))
        assert sorted(conn.execute(by_id).scalars()) == sorted(f"k{i}" for i in wanted)
        hashes = [key_hash("k7"), key_hash("k2000"), key_hash("absent")]
        by_hash = sa.select(KERNELS.c.id).where(one_of(conn, KERNELS.c.key_hash, hashes))
        assert sorted(conn.execute(by_hash).scalars()) == [7, 2000]
        none = sa.select(KERNELS.c.id).where(one_of(conn, KERNELS.c.id, []))
        assert conn.execute(none).all() == []
