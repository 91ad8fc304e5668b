"""One migrator of a store at a time, however long the other's migration takes.

Two replicas started on an empty PostgreSQL database, or two jobs upgrading one SQLite file,
must not both migrate it: the second waits for the first to commit, then finds the store at
head. A migration of a large store can take minutes (a column filled in over millions of
measurements), far past the store's usual lock wait (``DEFAULT_BUSY_TIMEOUT_S``, 5 s, which
keeps a check from hanging behind a stuck writer): the second migrator failed there as
"locked". So a migrator first asks for the lock without waiting; when another process holds
it, it says so (``on_wait``) and waits up to ``MIGRATION_WAIT_S`` for it alone. Its own
statements keep the usual lock wait.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

from service.errors import StoreUnavailable

#: How long a migrator waits for another process's migration of the same store.
MIGRATION_WAIT_S = 900
#: The key of the PostgreSQL advisory lock migrations hold: any fixed 64-bit number ("roofguar").
MIGRATION_LOCK_KEY = int.from_bytes(b"roofguar", "big")

Waiting = Callable[[], None]
#: How many of a foreign database's tables its refusal names.
FOREIGN_TABLES_SHOWN = 5


def refuse_foreign_tables(conn: sa.Connection, where: str) -> None:
    """StoreUnavailable when the database has tables but no migration of ours (another app's).

    Read as empty, it was told to run ``roofguard db upgrade``, which then failed on a table
    of the same name ("table runs already exists", PostgreSQL's DuplicateTable).
    """
    tables = sorted(sa.inspect(conn).get_table_names())
    if not tables or "alembic_version" in tables:
        return
    shown = ", ".join(tables[:FOREIGN_TABLES_SHOWN]) + (
        ", ..." if len(tables) > FOREIGN_TABLES_SHOWN else ""
    )
    raise StoreUnavailable(
        f"history store {where}: this database holds tables that are not a roofguard store "
        f"({shown}): point --db at an empty database or a roofguard store"
    )


@contextmanager
def one_migrator_at_a_time(conn: sa.Connection, on_wait: Waiting | None) -> Iterator[None]:
    """The migration's transaction on ``conn``, begun once no other process migrates the store.

    PostgreSQL: a transaction-scoped advisory lock. SQLite: the transaction's ``BEGIN
    IMMEDIATE`` already holds the only write lock, taken with a longer busy timeout.
    """
    said = on_wait or (lambda: None)
    if conn.dialect.name == "sqlite":
        with _patient_sqlite(conn.connection.dbapi_connection, said), conn.begin():
            yield
        return
    with conn.begin():
        if conn.dialect.name == "postgresql":
            _advisory_lock(conn, said)
        yield


def _advisory_lock(conn: sa.Connection, on_wait: Waiting) -> None:
    """Take the migrators' lock: at once, or after saying so and waiting for the other."""
    key = {"key": MIGRATION_LOCK_KEY}
    if conn.execute(sa.text("SELECT pg_try_advisory_xact_lock(:key)"), key).scalar():
        return
    on_wait()
    usual = conn.execute(sa.text("SHOW lock_timeout")).scalar()
    _set_lock_timeout(conn, f"{MIGRATION_WAIT_S}s")
    conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), key)
    _set_lock_timeout(conn, str(usual))


def _set_lock_timeout(conn: sa.Connection, value: str) -> None:
    """``SET LOCAL lock_timeout`` (to the transaction's end), the value bound, not pasted."""
    conn.execute(sa.text("SELECT set_config('lock_timeout', :value, true)"), {"value": value})


@contextmanager
def _patient_sqlite(raw: Any, on_wait: Waiting) -> Iterator[None]:
    """SQLite's busy timeout raised to ``MIGRATION_WAIT_S`` while inside, said if needed."""
    usual = int(raw.execute("PRAGMA busy_timeout").fetchone()[0])
    try:
        if _write_locked(raw):
            on_wait()
        raw.execute(f"PRAGMA busy_timeout = {MIGRATION_WAIT_S * 1000}")
        yield
    finally:
        raw.execute(f"PRAGMA busy_timeout = {usual}")


def _write_locked(raw: Any) -> bool:
    """Whether another connection holds the file's write lock now (asked without waiting)."""
    raw.execute("PRAGMA busy_timeout = 0")
    try:
        raw.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc):
            raise
        return True
    raw.execute("ROLLBACK")
    return False
