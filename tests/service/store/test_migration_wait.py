"""A migrator waits for another process's migration, however long, and says so.

The store's usual lock wait (5 s) keeps a check from hanging behind a stuck writer; a
second ``roofguard db upgrade`` (a replica's init container, a second job) waiting on a
migration of a large store used to fail there as "locked".
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from service.cli import run as cli
from service.store.db import current_revision, head_revision, make_engine, migrate


@contextmanager
def write_locked(path: Path, seconds: float) -> Iterator[None]:
    """Another connection holds the SQLite file's write lock for ``seconds``."""
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    release = threading.Timer(seconds, lambda: other.execute("ROLLBACK"))
    release.start()
    try:
        yield
    finally:
        release.join()
        other.close()


@pytest.fixture
def store(tmp_path) -> Path:
    """An empty SQLite store file in WAL mode, as roofguard leaves one (the lock needs it)."""
    path = tmp_path / "history.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.close()
    return path


def test_a_migration_waits_past_the_busy_timeout_for_another_writer(store):
    engine = make_engine(f"sqlite:///{store}", busy_timeout_s=0.2)
    waits: list[str] = []
    try:
        with write_locked(store, seconds=1.0):
            assert migrate(engine, on_wait=lambda: waits.append("waiting")) == head_revision()
        assert waits == ["waiting"]
        assert current_revision(engine) == head_revision()
        with engine.connect() as conn:  # the connection's own wait is back to the usual
            raw = conn.connection.dbapi_connection
            assert raw.execute("PRAGMA busy_timeout").fetchone()[0] == 200
    finally:
        engine.dispose()


def test_a_migration_alone_does_not_say_it_waits(store):
    engine = make_engine(f"sqlite:///{store}")
    waits: list[str] = []
    migrate(engine, on_wait=lambda: waits.append("waiting"))
    engine.dispose()
    assert waits == []


def test_the_command_says_it_waits_for_another_migrator(store, capsys):
    with write_locked(store, seconds=0.5):
        assert cli(["db", "upgrade", "--db", f"sqlite:///{store}"]) == 0
    said = capsys.readouterr()
    assert "is being migrated by another process: waiting for it (at most 15 minutes)" in (said.err)
    head = head_revision()
    assert f"upgraded from empty to {head} ({int(head)} migrations)" in said.out


def test_the_command_says_nothing_was_applied_when_another_migrated_it(store, capsys):
    """Another upgrade took the store to head while this one waited: none applied here."""
    migrate(make_engine(f"sqlite:///{store}"))
    assert cli(["db", "upgrade", "--db", f"sqlite:///{store}"]) == 0
    assert "already at migration" in capsys.readouterr().out
