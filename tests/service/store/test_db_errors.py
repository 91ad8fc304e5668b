"""A driver error's message, which ends up in logs with its traceback, lists no parameters.

(PostgreSQL's own detail may still quote the key that collided; nothing else is shown.)
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from service.store.db import open_store
from service.store.tables import Repository, table_of


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_statement_errors_do_not_show_their_parameters(backend, tmp_path, request) -> None:
    url = (
        f"sqlite:///{tmp_path / 'h.db'}"
        if backend == "sqlite"
        else request.getfixturevalue("postgres_url")
    )
    engine = open_store(url)
    table = table_of(Repository)
    secret = "acme/secret-" + "x" * 8
    try:
        with pytest.raises(sa.exc.IntegrityError) as caught, engine.begin() as conn:
            row = {"name": secret, "created_at": datetime(2026, 1, 1, tzinfo=UTC)}
            conn.execute(sa.insert(table), [row, row])  # the second breaks the unique name
        message = str(caught.value)
        assert "[SQL parameters hidden due to hide_parameters=True]" in message
        assert "datetime.datetime(2026" not in message and "'name':" not in message
    finally:
        with engine.begin() as conn:
            conn.execute(sa.delete(table).where(table.c.name == secret))
        engine.dispose()


class _CutConnection:
    """A real sqlite3 connection whose server goes away once ``cut`` is set: its statements
    and its rollback fail, as psycopg's did when PostgreSQL terminated the backend during
    an upload (the rollback: "cannot exit pipeline mode while busy")."""

    cut = False

    def __init__(self, path: Path) -> None:
        self._conn = sqlite3.connect(path, check_same_thread=False)

    def __getattr__(self, name: str) -> object:
        return getattr(self._conn, name)

    def cursor(self) -> object:
        if _CutConnection.cut:
            raise sqlite3.OperationalError("terminating connection due to administrator command")
        return self._conn.cursor()

    def rollback(self) -> None:
        if _CutConnection.cut:
            raise sqlite3.OperationalError("cannot exit pipeline mode while busy")
        self._conn.rollback()


def test_a_rollback_that_fails_on_a_cut_connection_does_not_hide_the_cut(tmp_path) -> None:
    """The caller still gets the ``StoreUnavailable`` it retries on, not the rollback's
    error (which a storm of cut connections once turned into an upload's 500)."""
    from service.errors import StoreUnavailable
    from service.store.db import session_scope

    engine = sa.create_engine("sqlite://", creator=lambda: _CutConnection(tmp_path / "h.db"))
    try:
        cut = pytest.raises(StoreUnavailable, match=r"unreachable: .*terminating connection")
        with cut, session_scope(engine) as session:
            session.execute(sa.text("SELECT 1"))
            _CutConnection.cut = True
            session.execute(sa.text("SELECT 2"))
    finally:
        _CutConnection.cut = False
        engine.dispose()
