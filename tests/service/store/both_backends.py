"""A fresh, migrated store on SQLite and on PostgreSQL, for tests that must agree on both.

Import the fixture into a test module (``from both_backends import both_backends_engine``;
its name is ``engine``). The PostgreSQL case needs ``postgres_url``, which skips with its
reason without a server.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from service.store.db import open_store


@pytest.fixture(
    name="engine", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def both_backends_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sa.Engine]:
    if request.param == "sqlite":
        engine = open_store(f"sqlite:///{tmp_path / 'history.db'}")
        yield engine
        engine.dispose()
        return
    engine = open_store(request.getfixturevalue("postgres_url"))
    yield engine
    with engine.begin() as conn:  # a clean schema for the next test
        conn.exec_driver_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    engine.dispose()
