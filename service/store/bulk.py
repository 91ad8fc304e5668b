"""Many rows at once: PostgreSQL's COPY, or ``executemany`` in chunks elsewhere.

A run of a million kernels is a million measurement rows and as many kernel rows. Sent by
``executemany`` they took PostgreSQL 185 s; ``COPY ... FROM STDIN`` (psycopg's
``cursor.copy``) streams the same rows in one statement. Rows are consumed as they come,
``CHUNK`` at a time, so the caller can hand over a generator and never hold every row.
Both write inside the session's transaction: a failure leaves nothing behind.
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

from service.store.sessions import StoreSession

#: Rows per ``executemany`` (and per list built at a time): bounded memory, few round trips.
CHUNK = 10_000
#: Fewer rows than this are inserted as before (a temporary table costs more than it saves).
_COPY_FROM = 1_000


def _chunks(rows: Iterable[Mapping[str, Any]]) -> Iterator[list[Mapping[str, Any]]]:
    it = iter(rows)
    while chunk := list(itertools.islice(it, CHUNK)):
        yield chunk


def _postgres(session: StoreSession) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def insert_rows(session: StoreSession, table: sa.Table, rows: Iterable[Mapping[str, Any]]) -> None:
    """Insert ``rows`` (dicts with the same keys) into ``table``: COPY on PostgreSQL."""
    chunks = _chunks(rows)
    first = next(chunks, None)
    if first is None:
        return
    if _postgres(session) and len(first) >= _COPY_FROM:
        _copy(session, table.name, list(first[0]), itertools.chain([first], chunks), table)
        return
    for chunk in itertools.chain([first], chunks):
        session.execute(sa.insert(table), chunk)


def copy_ignoring_conflicts(
    session: StoreSession, table: sa.Table, rows: Sequence[Mapping[str, Any]]
) -> bool:
    """COPY ``rows`` into ``table`` skipping those that collide with a unique key.

    PostgreSQL only, and only for many rows (returns False, writing nothing, otherwise): the
    rows go by COPY into a temporary table, then ``INSERT ... SELECT ... ON CONFLICT DO
    NOTHING`` moves them, so two processes ingesting at once still cannot collide.
    """
    if not _postgres(session) or len(rows) < _COPY_FROM:
        return False
    with _scratch(session, table, rows) as (scratch, columns):
        _move(session, table, scratch, columns)
    return True


def copy_returning_ids(
    session: StoreSession,
    table: sa.Table,
    rows: Iterable[Mapping[str, Any]],
    *,
    count: int,
    match: Sequence[str],
) -> dict[Any, int] | None:
    """Insert ``count`` ``rows`` skipping conflicts; the id of each, new or stored before.

    The ids come by ``match`` (the columns of a unique key) in one join of the scratch table
    with ``table``, instead of looking up a million keys by value, keyed by the last of those
    columns. None where not PostgreSQL or too few rows (nothing read or written then); the
    rows may be a generator, consumed as they are sent.
    """
    if not _postgres(session) or count < _COPY_FROM:
        return None
    quote = session.get_bind().dialect.identifier_preparer.quote
    with _scratch(session, table, rows) as (scratch, columns):
        _move(session, table, scratch, columns)
        on = " AND ".join(f"t.{quote(c)} = s.{quote(c)}" for c in match)
        sql = (
            f"SELECT s.{quote(match[-1])}, t.id FROM {scratch} s JOIN {quote(table.name)} t ON {on}"
        )
        return {key: int(i) for key, i in session.connection().exec_driver_sql(sql)}


@contextmanager
def _scratch(
    session: StoreSession, table: sa.Table, rows: Iterable[Mapping[str, Any]]
) -> Iterator[tuple[str, list[str]]]:
    """A temporary table of ``table``'s columns holding ``rows`` (by COPY), and its columns."""
    quote = session.get_bind().dialect.identifier_preparer.quote
    chunks = _chunks(rows)
    first = next(chunks)
    columns = list(first[0])
    names = ", ".join(quote(c) for c in columns)
    scratch = f"copy_{uuid.uuid4().hex[:12]}"
    conn = session.connection()
    conn.exec_driver_sql(
        f"CREATE TEMPORARY TABLE {scratch} AS SELECT {names} FROM {quote(table.name)} WITH NO DATA"
    )
    _copy(session, scratch, columns, itertools.chain([first], chunks), table)
    yield scratch, columns
    conn.exec_driver_sql(f"DROP TABLE {scratch}")


def _move(session: StoreSession, table: sa.Table, scratch: str, columns: list[str]) -> None:
    """``INSERT INTO table SELECT ... FROM scratch ON CONFLICT DO NOTHING``."""
    quote = session.get_bind().dialect.identifier_preparer.quote
    names = ", ".join(quote(c) for c in columns)
    session.connection().exec_driver_sql(
        f"INSERT INTO {quote(table.name)} ({names}) SELECT {names} FROM {scratch} "
        "ON CONFLICT DO NOTHING"
    )


def _copy(
    session: StoreSession,
    target: str,
    columns: list[str],
    chunks: Iterable[list[Mapping[str, Any]]],
    table: sa.Table,
) -> None:
    """``COPY target (columns) FROM STDIN`` of every row of ``chunks`` (JSON columns as text)."""
    quote = session.get_bind().dialect.identifier_preparer.quote
    as_json = {c for c in columns if isinstance(table.c[c].type, sa.JSON)}
    # json.dumps is what SQLAlchemy's JSON type writes (the engine sets no serialiser).
    convert = [(c, json.dumps if c in as_json else None) for c in columns]
    sql = f"COPY {quote(target)} ({', '.join(quote(c) for c in columns)}) FROM STDIN"
    driver = session.connection().connection.driver_connection
    assert driver is not None
    with driver.cursor() as cursor, cursor.copy(sql) as copy:
        for chunk in chunks:
            for row in chunk:
                copy.write_row([row[c] if f is None else f(row[c]) for c, f in convert])
