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
from scratchdb import scratch_database

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
    # A database of its own, not the worker's: tests of another module sharing that one may be
    # midway (their module's runs stored), as xdist interleaves modules on a worker.
    with scratch_database(request.getfixturevalue("postgres_url"), "both") as url:
        engine = open_store(url)
        yield engine
        engine.dispose()
