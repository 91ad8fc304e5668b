"""Read many rows into a DataFrame fast: the one place that knows driver-level tricks.

* PostgreSQL (psycopg 3): ``COPY (SELECT ...) TO STDOUT`` as CSV, parsed by pandas' C reader;
  several times faster than fetching Python tuples.
* Other drivers: the DBAPI cursor's plain tuples (no SQLAlchemy ``Row`` per row; pandas
  would probe each Row's attributes, which costs seconds on 180,000 rows).

* PostgreSQL: a long list of values as one array parameter (``one_of``), not one parameter
  each: psycopg converts a query's placeholders in Python and caches only short queries, so
  ``IN`` with 2,000 ids cost 9-12 ms of CPU a query against 1.7-1.9 ms.

Only statements whose bound values are integers or plain strings go through COPY (they are
rendered inline); the statements of ``service.store.history`` qualify.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import pandas as pd
import sqlalchemy as sa

from service.store.drivererrors import driver_errors

if TYPE_CHECKING:
    import psycopg


def one_of(
    conn: sa.Connection, column: sa.ColumnElement[Any], values: Sequence[Any]
) -> sa.ColumnElement[bool]:
    """``column IN values``: on PostgreSQL ``column = ANY(array)``, one parameter for all."""
    if conn.dialect.name != "postgresql":
        return column.in_(values)
    return column == sa.any_(sa.bindparam(None, list(values), type_=sa.ARRAY(column.type)))


def raw_rows(conn: sa.Connection, stmt: sa.Executable) -> list[tuple[Any, ...]]:
    """Rows of ``stmt`` as plain DBAPI tuples (for columns that need no result processing)."""
    result = conn.execute(stmt)
    try:
        return list(result.cursor.fetchall()) if result.cursor is not None else []
    finally:
        result.close()


def _copy_csv(conn: sa.Connection, stmt: sa.Select[Any]) -> io.BytesIO:
    sql = str(stmt.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
    buffer = io.BytesIO()
    # The same connection, so the same transaction and snapshot as the other queries.
    dbapi = cast("psycopg.Connection[Any]", conn.connection.dbapi_connection)
    command = f"COPY ({sql}) TO STDOUT WITH (FORMAT csv)"
    with driver_errors(conn, sql), dbapi.cursor() as cursor, cursor.copy(command) as copy:
        for block in copy:
            buffer.write(block)
    buffer.seek(0)
    return buffer


def read_frame(
    conn: sa.Connection, stmt: sa.Select[Any], columns: Sequence[str], floats: Sequence[str] = ()
) -> pd.DataFrame:
    """``stmt``'s rows as a DataFrame with ``columns``; ``floats`` become float64 (NaN = NULL)."""
    if conn.dialect.name == "postgresql" and conn.dialect.driver == "psycopg":
        buffer = _copy_csv(conn, stmt)
        if not buffer.getbuffer().nbytes:
            return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
        return pd.read_csv(
            buffer,
            names=list(columns),
            dtype={c: "float64" for c in floats},
            keep_default_na=False,
            na_values=[""],
        )
    frame = pd.DataFrame(raw_rows(conn, stmt), columns=list(columns))
    for column in floats:
        if frame[column].dtype != "float64":
            frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("float64")
    return frame
