"""The driver's errors raised as SQLAlchemy raises them, where a statement goes around it.

COPY (PostgreSQL, both ways) and SQLite's ``executemany`` of a run's rows run on the raw
driver cursor, outside SQLAlchemy's error handling. Their errors came out as the driver's own
(psycopg's ``AdminShutdown``, sqlite3's ``OperationalError`` on a full disk), which
``session_scope`` and the service's retry loop do not know: an upload answered 500 instead of
the 503 that clients retry on, and a full disk read "unexpected OperationalError".
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:
    from sqlalchemy.engine.interfaces import DBAPIModule


@contextmanager
def driver_errors(conn: sa.Connection, sql: str) -> Iterator[None]:
    """Raise the driver's errors inside as ``sa.exc.DBAPIError`` (``sql`` named in them)."""
    try:
        yield
    except conn.dialect.loaded_dbapi.Error as exc:
        raise _wrapped(conn, sql, exc) from exc


def _wrapped(conn: sa.Connection, sql: str, exc: DBAPIModule.Error) -> sa.exc.StatementError:
    """The error as SQLAlchemy would have raised it from ``conn.execute``.

    A dead connection is also invalidated, so the pool never lends it again.
    """
    dialect = conn.dialect
    gone = dialect.is_disconnect(exc, conn.connection.dbapi_connection, None)
    if gone:
        conn.invalidate(exc)
    return sa.exc.DBAPIError.instance(
        sql, None, exc, dialect.loaded_dbapi.Error, connection_invalidated=gone, dialect=dialect
    )
