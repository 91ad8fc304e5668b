"""The history store on a real PostgreSQL (``postgres`` marker, ROOFGUARD_TEST_POSTGRES_URL)."""

from __future__ import annotations

import pytest
from store_cases import *  # noqa: F403  (the backend-independent cases)
from store_cases import count, nightly, store

from service.errors import StoreUnavailable
from service.store.db import open_store

pytestmark = pytest.mark.postgres


@pytest.fixture
def engine(postgres_url):
    engine = open_store(postgres_url)
    yield engine
    with engine.begin() as conn:  # a clean schema for the next test
        conn.exec_driver_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    engine.dispose()


def test_a_store_whose_migrations_are_behind_is_refused(engine, postgres_url):
    store(engine, nightly(1))
    with engine.begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0000'")
    with pytest.raises(StoreUnavailable, match="run `roofguard db upgrade`"):
        open_store(postgres_url)
    assert count(engine, "runs") == 1


def test_a_locked_table_gives_one_clear_error_and_writes_nothing(engine, postgres_url):
    quick = open_store(postgres_url, busy_timeout_s=0.2)
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
