"""The history store on a real SQLite file: shared cases, migrations, locks, the ingest CLI."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa
from factories import make_device, make_kernel, make_run
from store_cases import *  # noqa: F403  (the backend-independent cases)
from store_cases import REPO, count, nightly, store

from service.cli import run as cli
from service.errors import StoreUnavailable
from service.store.db import (
    alembic_config,
    current_revision,
    ensure_current,
    head_revision,
    make_engine,
    migrate,
    open_store,
    session_scope,
)
from service.store.queries import list_runs


@pytest.fixture
def engine(tmp_path):
    engine = open_store(f"sqlite:///{tmp_path / 'history.db'}")
    yield engine
    engine.dispose()


def test_sqlite_store_runs_in_wal_with_foreign_keys(engine):
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 5000


# --- migrations ---------------------------------------------------------------------------


def test_an_empty_database_is_not_current_until_upgraded(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'h.db'}")
    with pytest.raises(StoreUnavailable, match=r"not initialised; run `roofguard db upgrade`"):
        ensure_current(engine)
    assert migrate(engine) == head_revision() == current_revision(engine)
    ensure_current(engine)


def test_the_head_revision_is_alembics_newest_migration():
    from alembic.script import ScriptDirectory

    assert head_revision() == ScriptDirectory.from_config(alembic_config()).get_current_head()


def test_a_store_whose_migrations_are_behind_is_refused_and_left_alone(tmp_path):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    store(open_store(url), nightly(1))
    with sa.create_engine(url).begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0000'")
    head = head_revision()
    with pytest.raises(StoreUnavailable, match=rf"at migration 0000, this roofguard needs {head}"):
        open_store(url)
    assert current_revision(make_engine(url)) == "0000"  # never upgraded implicitly


# --- unavailable stores -------------------------------------------------------------------


def test_a_locked_store_gives_one_clear_error_and_writes_nothing(tmp_path):
    path = tmp_path / "h.db"
    engine = open_store(f"sqlite:///{path}", busy_timeout_s=0.2)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        with pytest.raises(StoreUnavailable, match="is locked by another writer"):
            store(engine, nightly(1))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert count(engine, "runs") == 0
    with session_scope(engine, readonly=True) as session:  # readers never needed the lock
        assert list_runs(session=session) == []


def test_reading_while_another_process_writes(tmp_path):
    path = tmp_path / "h.db"
    engine = open_store(f"sqlite:///{path}", busy_timeout_s=0.2)
    store(engine, nightly(1))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with session_scope(engine, readonly=True) as session:
            assert len(list_runs(session=session)) == 1
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_an_unreachable_postgresql_gives_one_clear_error():
    with pytest.raises(StoreUnavailable, match=r"127\.0\.0\.1:1/nowhere is unreachable"):
        open_store("postgresql+psycopg://roofguard@127.0.0.1:1/nowhere", busy_timeout_s=1)


# --- the CLI ------------------------------------------------------------------------------


def write_run(path: Path, **kw) -> Path:
    path.write_text(make_run(**kw).model_dump_json(), encoding="utf-8")
    return path


ARGS = ["--repo", REPO, "--commit", "abc123", "--branch", "main", "--kind", "nightly"]


def test_cli_ingest_merges_files_and_is_idempotent(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROOFGUARD_DATABASE_URL", raising=False)
    one = write_run(tmp_path / "one.json", kernels=[make_kernel("a"), make_kernel("b")])
    two = write_run(tmp_path / "two.json", kernels=[make_kernel("c")])
    assert cli(["ingest", str(one), str(two), *ARGS, "--timestamp", "2026-02-01T03:00"]) == 0
    assert capsys.readouterr().out == "ingested run 1 (3 kernels)\n"
    assert cli(["ingest", str(one), str(two), *ARGS, "--timestamp", "2026-02-01T03:00"]) == 0
    assert capsys.readouterr().out == "already ingested as run 1 (same content)\n"
    engine = make_engine()  # the default store in the working directory
    assert Path(".roofguard/history.db").is_file()
    with session_scope(engine, readonly=True) as session:
        (run,) = list_runs(session=session)
    assert (run.commit, run.kind, run.device, run.timestamp.hour) == (
        "abc123",
        "nightly",
        "H100-SXM5",
        3,
    )


def test_cli_ingest_reads_the_database_url_from_the_environment(tmp_path, capsys, monkeypatch):
    url = f"sqlite:///{tmp_path / 'env.db'}"
    monkeypatch.setenv("ROOFGUARD_DATABASE_URL", url)
    assert cli(["ingest", str(write_run(tmp_path / "r.json")), *ARGS]) == 0
    assert count(make_engine(url), "runs") == 1


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--device", "H1OO-SMX"], "unknown device 'H1OO-SMX'; closest known: H100"),
        (["--pr", "5"], "--pr 5 given with --kind nightly; use --kind pr"),
        (["--timestamp", "yesterday"], "--timestamp: 'yesterday' is not an ISO-8601 timestamp"),
        (["--roof", "report"], "--roof report: the report of device"),
    ],
)
def test_cli_ingest_bad_input_is_one_clear_error(tmp_path, capsys, extra, message):
    db = f"sqlite:///{tmp_path / 'h.db'}"
    path = write_run(tmp_path / "r.json")
    assert cli(["ingest", str(path), *ARGS, "--db", db, *extra]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "h.db").exists()  # nothing written, not even an empty store


def test_cli_ingest_refuses_a_kernel_in_two_files(tmp_path, capsys):
    one = write_run(tmp_path / "one.json", kernels=[make_kernel("a")])
    two = write_run(tmp_path / "two.json", kernels=[make_kernel("a")])
    assert cli(["ingest", str(one), str(two), *ARGS, "--db", f"sqlite:///{tmp_path}/h.db"]) == 2
    assert f"{two}: kernel key 'a' is already in {one}" in capsys.readouterr().err


def test_cli_ingest_into_a_store_that_is_behind(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'h.db'}"
    store(open_store(db), nightly(1))
    with sa.create_engine(db).begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0000'")
    assert cli(["ingest", str(write_run(tmp_path / "r.json")), *ARGS, "--db", db]) == 2
    assert "run `roofguard db upgrade`" in capsys.readouterr().err
    assert count(make_engine(db), "runs") == 1


def test_cli_db_upgrade_and_current(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'h.db'}"
    assert cli(["db", "current", "--db", db]) == 2  # no store there: none is made
    assert "no history store at" in capsys.readouterr().err
    (tmp_path / "h.db").touch()  # a store nothing was migrated in (a new PostgreSQL database)
    assert cli(["db", "current", "--db", db]) == 1
    head = head_revision()  # the newest migration, whichever it is
    assert f"none (empty), newest is {head}; run `roofguard db upgrade`" in capsys.readouterr().out
    assert cli(["db", "upgrade", "--db", db]) == 0
    assert f"upgraded from empty to {head}" in capsys.readouterr().out
    assert cli(["db", "upgrade", "--db", db]) == 0
    assert f"already at migration {head}" in capsys.readouterr().out
    assert cli(["db", "current", "--db", db]) == 0


def test_cli_ingest_on_the_report_roof_of_a_pr_run(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'h.db'}"
    device = make_device(peak_flop_per_s={"tensor_fp16": 7e14}, bandwidth_byte_per_s={"dram": 3e12})
    path = write_run(tmp_path / "r.json", device=device)
    args = ["--repo", REPO, "--commit", "abc", "--branch", "feature", "--pr", "12"]
    assert cli(["ingest", str(path), *args, "--roof", "report", "--db", db]) == 0
    with session_scope(make_engine(db), readonly=True) as session:
        (run,) = list_runs(session=session)
    assert (run.kind, run.pull_request, run.roof_label) == ("pr", 12, "H100-SXM5 (report)")
