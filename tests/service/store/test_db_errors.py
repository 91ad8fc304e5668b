"""A driver error's message, which ends up in logs with its traceback, lists no parameters.

(PostgreSQL's own detail may still quote the key that collided; nothing else is shown.)
"""

from __future__ import annotations

from datetime import UTC, datetime

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
