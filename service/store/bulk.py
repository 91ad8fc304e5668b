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

from service.store.drivererrors import driver_errors
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
    """Insert ``rows`` (dicts with the same keys) into ``table``: COPY on PostgreSQL.

    Neither COPY nor the driver's ``executemany`` (SQLite) applies a column's Python-side
    default: rows that leave out a column with one are refused (``refuse_defaulted_gaps``).
    """
    if session.get_bind().dialect.name == "sqlite":
        _insert_by_driver(session, table, rows)
        return
    chunks = _chunks(rows)
    first = next(chunks, None)
    if first is None:
        return
    refuse_defaulted_gaps(table, first[0])
    if _postgres(session) and len(first) >= _COPY_FROM:
        _copy(session, table.name, list(first[0]), itertools.chain([first], chunks), table)
        return
    for chunk in itertools.chain([first], chunks):
        session.execute(sa.insert(table), chunk)


def _insert_by_driver(
    session: StoreSession, table: sa.Table, rows: Iterable[Mapping[str, Any]]
) -> None:
    """``rows`` bound (``_bound``) and streamed to ``driver_executemany``: SQLite."""
    it = iter(rows)
    first = next(it, None)
    if first is None:
        return
    columns, dialect = refuse_defaulted_gaps(table, first), session.get_bind().dialect
    every = itertools.chain([first], it)
    driver_executemany(session, table, columns, _bound(table, dialect, columns, every))


def refuse_defaulted_gaps(table: sa.Table, columns: Iterable[str]) -> list[str]:
    """``columns``, unless a column with a Python-side default is not among them.

    Neither COPY nor the driver's ``executemany`` applies such a default, and which of them
    writes a run depends on the backend and its size; SQLAlchemy's insert, which writes a
    small PostgreSQL batch, would. A row without a NOT NULL one failed on all but that path.

    Raises:
        ValueError: A column with a default is left out (a bug of the caller), named.
    """
    given = list(columns)
    left_out = [c.name for c in table.c if c.default is not None and c.name not in given]
    if left_out:
        raise ValueError(
            f"rows for {table.name} leave out {', '.join(left_out)}: COPY and executemany "
            "apply no Python-side default, so every row must give it"
        )
    return given


def driver_executemany(
    session: StoreSession, table: sa.Table, columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    """Insert ``rows``, ``columns``' values as the driver takes them, by its ``executemany``.

    SQLite; ``CHUNK`` rows at a time, in the session's transaction.
    """
    quote = session.get_bind().dialect.identifier_preparer.quote
    names = ", ".join(quote(c) for c in columns)
    marks = ", ".join("?" * len(columns))
    sql = f"INSERT INTO {quote(table.name)} ({names}) VALUES ({marks})"
    conn = session.connection()
    driver = conn.connection.driver_connection
    assert driver is not None
    cursor, it = driver.cursor(), iter(rows)
    with driver_errors(conn, sql):  # a full disk is the store's error, as through SQLAlchemy
        while chunk := list(itertools.islice(it, CHUNK)):
            cursor.executemany(sql, chunk)


def _bound(
    table: sa.Table, dialect: sa.Dialect, columns: list[str], rows: Iterable[Mapping[str, Any]]
) -> Iterator[list[Any]]:
    """Each row's values of ``columns``, bound as SQLAlchemy binds them (JSON as its text).

    ``session.execute(insert, rows)`` builds and binds a parameter set per row in Python:
    2,000 measurement rows took 28-33 ms of a check against 20-25 ms this way, with the same
    bytes stored.
    """
    binds = [
        (i, table.c[c].type.dialect_impl(dialect).bind_processor(dialect))
        for i, c in enumerate(columns)
    ]
    processed = [(i, bind) for i, bind in binds if bind is not None]
    for row in rows:
        values = [row[c] for c in columns]
        for i, bind in processed:
            values[i] = bind(values[i])
        yield values


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

    The ids of the rows stored before come by ``match`` (the columns of a unique key) in one
    join of the scratch table with ``table``, instead of looking up a million keys by value;
    only the rows it misses are inserted, their ids returned by the insert itself. Keyed by
    the last of those columns. None where not PostgreSQL or too few rows (nothing read or
    written then); the rows may be a generator, consumed as they are sent.
    """
    if not _postgres(session) or count < _COPY_FROM:
        return None
    quote = session.get_bind().dialect.identifier_preparer.quote
    conn = session.connection()
    key = quote(match[-1])
    on = " AND ".join(f"t.{quote(c)} = s.{quote(c)}" for c in match)
    with _scratch(session, table, rows) as (scratch, columns):
        conn.exec_driver_sql(f"ANALYZE {scratch}")  # a temporary table has no statistics
        joined = f"SELECT s.{key}, t.id FROM {scratch} s JOIN {quote(table.name)} t ON {on}"
        ids = {k: int(i) for k, i in conn.exec_driver_sql(joined)}
        if len(ids) < count:
            missing = f" WHERE NOT EXISTS (SELECT 1 FROM {quote(table.name)} t WHERE {on})"
            ids.update(_insert(session, table, scratch, columns, key, missing if ids else ""))
        if len(ids) < count:  # another ingest stored some of them meanwhile
            ids = {k: int(i) for k, i in conn.exec_driver_sql(joined)}
        return ids


def _insert(
    session: StoreSession, table: sa.Table, scratch: str, columns: list[str], key: str, where: str
) -> dict[Any, int]:
    """Insert the rows of ``scratch`` (``where`` they are missing); their ``key`` and new id.

    A plain INSERT: ``ON CONFLICT``'s speculative insertion costs a fifth more a row. Should
    another ingest store some of the rows meanwhile, it fails on the unique key, is rolled
    back to its savepoint and made again skipping them (their ids are then not returned).
    """
    quote = session.get_bind().dialect.identifier_preparer.quote
    names, into = ", ".join(quote(c) for c in columns), quote(table.name)
    sql = f"INSERT INTO {into} ({names}) SELECT {names} FROM {scratch} s{where}"
    try:
        with session.begin_nested():  # its connection, asked inside, emits the SAVEPOINT
            rows = session.connection().exec_driver_sql(f"{sql} RETURNING {key}, id").all()
    except sa.exc.IntegrityError:
        skip = f"{sql} ON CONFLICT DO NOTHING RETURNING {key}, id"
        rows = session.connection().exec_driver_sql(skip).all()
    return {k: int(i) for k, i in rows}


@contextmanager
def _scratch(
    session: StoreSession, table: sa.Table, rows: Iterable[Mapping[str, Any]]
) -> Iterator[tuple[str, list[str]]]:
    """A temporary table of ``table``'s columns holding ``rows`` (by COPY), and its columns."""
    quote = session.get_bind().dialect.identifier_preparer.quote
    chunks = _chunks(rows)
    first = next(chunks)
    columns = refuse_defaulted_gaps(table, first[0])
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
    as_json = {c for c in columns if isinstance(table.c[c].type, sa.JSON)}
    # json.dumps is what SQLAlchemy's JSON type writes (the engine sets no serialiser).
    convert = [(c, json.dumps if c in as_json else None) for c in columns]
    rows = (
        [row[c] if f is None else f(row[c]) for c, f in convert]
        for chunk in chunks
        for row in chunk
    )
    copy_tuples(session, table, columns, rows, target=target)


def copy_tuples(
    session: StoreSession,
    table: sa.Table,
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    target: str | None = None,
) -> None:
    """COPY ``rows``, values of ``columns`` of ``table``, into ``target`` (default: ``table``).

    PostgreSQL only; JSON columns come as their text. The rows go in COPY's binary format
    where every column's type has a binary form here: the server then parses no number from
    text (a measurement row is a dozen floats), and psycopg packs the values instead of
    formatting them. On 100,000 measurement rows: 0.8-0.85x the wall time of the text
    format and half its CPU in this process (``tests/bench/bench_ingest_columns.py``).
    """
    quote = session.get_bind().dialect.identifier_preparer.quote
    types = [_binary_type(table.c[c].type) for c in columns]
    binary = all(types)
    sql = f"COPY {quote(target or table.name)} ({', '.join(quote(c) for c in columns)}) FROM STDIN"
    conn = session.connection()
    driver = conn.connection.driver_connection
    assert driver is not None
    with (
        driver_errors(conn, sql),
        driver.cursor() as cursor,
        cursor.copy(sql + (" (FORMAT BINARY)" if binary else "")) as copy,
    ):
        if binary:
            copy.set_types(types)
        for row in rows:
            copy.write_row(row)


#: PostgreSQL's binary type of each column type the bulk tables use, the narrower first (a
#: JSON value goes as its text, also the binary form of ``json``); another: text format.
_BINARY: tuple[tuple[type[Any], str], ...] = (
    (sa.BigInteger, "int8"),
    (sa.Integer, "int4"),
    (sa.Float, "float8"),
    (sa.String, "text"),
    (sa.Boolean, "bool"),
    (sa.JSON, "text"),
)


def _binary_type(column_type: Any) -> str | None:
    return next((name for kind, name in _BINARY if isinstance(column_type, kind)), None)
