"""The history store on a real PostgreSQL (``postgres`` marker, ROOFGUARD_TEST_POSTGRES_URL)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import sqlalchemy as sa
from scratchdb import scratch_database
from store_cases import *  # noqa: F403  (the backend-independent cases)
from store_cases import H100, count, nightly, store
from test_repository_case import upgrade_merges_twins

from rules.placement import place_run
from service.errors import StoreUnavailable
from service.store.db import (
    current_revision,
    head_revision,
    make_engine,
    migrate,
    open_store,
    session_scope,
)
from service.store.fastread import read_frame
from service.store.ingest import ingest_run
from service.store.migrating import MIGRATION_LOCK_KEY

pytestmark = pytest.mark.postgres


@pytest.fixture
def store_url(postgres_url):
    """A database of this test alone: the worker's is shared with modules xdist interleaves."""
    with scratch_database(postgres_url, "store") as url:
        yield url


@pytest.fixture
def engine(store_url):
    engine = open_store(store_url)
    yield engine
    engine.dispose()


def test_a_store_whose_migrations_are_behind_is_refused(engine, store_url):
    store(engine, nightly(1))
    with engine.begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0000'")
    with pytest.raises(StoreUnavailable, match="run `roofguard db upgrade`"):
        open_store(store_url)
    assert count(engine, "runs") == 1


def test_a_locked_table_gives_one_clear_error_and_writes_nothing(engine, store_url):
    quick = open_store(store_url, busy_timeout_s=0.2)
    blocker = engine.connect()
    blocker.exec_driver_sql("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE")  # another writer
    try:
        with pytest.raises(StoreUnavailable, match="is locked by another writer"):
            store(quick, nightly(1))
    finally:
        blocker.rollback()
        blocker.close()
        quick.dispose()
    assert count(engine, "runs") == 0 and count(engine, "repositories") == 0


def test_two_processes_ingesting_the_same_content_store_it_once(engine):
    run = nightly(1)
    pool = ThreadPoolExecutor(1)
    with session_scope(engine) as first:
        created = ingest_run(session=first, run=run, placements=place_run(run, H100), roof=H100)
        second = pool.submit(store, engine, run)
        time.sleep(0.3)  # the second now waits on the first's uncommitted unique keys
    assert second.result(timeout=30) == created.run_id  # it found the first run, no error
    pool.shutdown()
    assert count(engine, "runs") == 1


def test_two_first_uploads_that_spell_the_repository_differently_share_one(engine):
    pool = ThreadPoolExecutor(1)
    with session_scope(engine) as first:
        run = nightly(1, repo="Acme/Kernels")
        ingest_run(session=first, run=run, placements=place_run(run, H100), roof=H100)
        second = pool.submit(store, engine, nightly(2, repo="acme/kernels"))
        time.sleep(0.3)  # the second now waits on the first's uncommitted repository row
    second.result(timeout=30)
    pool.shutdown()
    assert count(engine, "repositories") == 1 and count(engine, "runs") == 2
    with engine.connect() as conn:
        owners = conn.exec_driver_sql("SELECT DISTINCT repo_id FROM runs").all()
    assert len(owners) == 1, "both runs are in the one history"


def test_the_upgrade_merges_repositories_that_differ_only_in_case(engine, store_url):
    with engine.begin() as conn:  # the fixture's store is at head: start from nothing
        conn.exec_driver_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    upgrade_merges_twins(store_url)


def test_a_connection_cut_during_a_copy_read_is_store_unavailable(engine):
    """History reads COPY on the raw psycopg cursor, outside SQLAlchemy's error handling: a
    backend terminated mid-read once escaped as psycopg's ``AdminShutdown``, and an upload
    in a storm of cut connections answered 500 instead of the 503 clients retry on."""
    store(engine, nightly(1))
    cut = pytest.raises(StoreUnavailable, match=r"unreachable: .*terminating connection")
    with cut, session_scope(engine, readonly=True) as session:
        conn = session.connection()
        pid = conn.connection.dbapi_connection.info.backend_pid
        with engine.connect() as killer:
            killer.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        read_frame(conn, sa.select(sa.text("id")).select_from(sa.text("runs")), ["id"])
    with session_scope(engine, readonly=True) as session:  # the pool gave the dead one up
        assert session.execute(sa.text("SELECT count(*) FROM runs")).scalar_one() == 1


def test_replicas_started_at_once_on_an_empty_database_all_find_it_ready(store_url):
    """Two ``serve`` replicas on a new database both found it empty and both created the
    tables: the second failed on PostgreSQL's catalog (UniqueViolation on ``pg_type``)."""
    pool = ThreadPoolExecutor(1)
    second: list = []

    def mid_migration(revision: str) -> None:
        if not second:  # the first's tables exist, uncommitted: the second opens now
            second.append(pool.submit(lambda: open_store(store_url).dispose()))
            time.sleep(0.5)

    first = make_engine(store_url)
    try:
        assert migrate(first, on_step=mid_migration) == head_revision()
        second[0].result(timeout=30)  # it waited for the first, then found the store at head
        assert current_revision(first) == head_revision()
    finally:
        pool.shutdown()
        first.dispose()


def test_a_migrator_waits_past_the_lock_timeout_for_another_migration(store_url):
    """A replica's migration waiting on another's longer than the store's lock wait (the
    engine's ``busy_timeout_s``, 5 s by default) failed as "locked"; it now waits, says so,
    and its own statements keep the usual lock timeout."""
    holder, waiter = make_engine(store_url), make_engine(store_url, busy_timeout_s=0.2)
    waits: list[str] = []
    try:
        with holder.connect() as other:
            other.begin()
            other.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK_KEY})
            threading.Timer(1.0, other.rollback).start()
            assert migrate(waiter, on_wait=lambda: waits.append("waiting")) == head_revision()
        assert waits == ["waiting"]
        with waiter.connect() as conn:
            assert conn.execute(sa.text("SHOW lock_timeout")).scalar() == "200ms"
    finally:
        holder.dispose()
        waiter.dispose()
