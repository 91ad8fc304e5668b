"""A store that is no store, or one a newer roofguard migrated: one line naming it, no trap."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa
from factories import make_kernel, make_run
from scratchdb import scratch_database

from service.cli import run
from service.store.db import HEAD_REVISION


def _error(capsys, argv: list[str]) -> str:
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unexpected" not in err and "Traceback" not in err
    return err


def _report(tmp_path: Path) -> Path:
    path = tmp_path / "run.json"
    path.write_text(make_run(kernels=[make_kernel("gemv", time_s=1e-3)]).model_dump_json())
    return path


def _commands(tmp_path: Path) -> list[list[str]]:
    report = str(_report(tmp_path))
    ingest = ["ingest", report, "--repo", "acme/k", "--branch", "main", "--commit", "c1"]
    return [["db", "upgrade"], ["db", "current"], ["token", "list"], ingest]


def test_a_file_that_is_no_database_is_named(tmp_path, capsys) -> None:
    """SQLite said only "file is not a database", an "unexpected" error naming no file."""
    notes = tmp_path / "notes.db"
    notes.write_text("hello\n")
    for argv in _commands(tmp_path):
        err = _error(capsys, [*argv, "--db", f"sqlite:///{notes}"])
        assert f"--db: {notes} is not a roofguard history store (not SQLite)" in err, argv
    assert notes.read_text() == "hello\n"


def test_a_store_a_newer_roofguard_migrated_says_to_upgrade_roofguard(tmp_path, capsys) -> None:
    """The advice was `roofguard db upgrade`, which then failed on a revision it did not know."""
    db = tmp_path / "h.db"
    assert run(["db", "upgrade", "--db", f"sqlite:///{db}"]) == 0
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0099'")
    capsys.readouterr()
    for argv in _commands(tmp_path):
        err = _error(capsys, [*argv, "--db", f"sqlite:///{db}"])
        assert f"at migration 0099, newer than this roofguard's newest ({HEAD_REVISION})" in err
        assert "pip install -U roofguard" in err and "db upgrade" not in err, argv


@pytest.mark.parametrize("argv", [["db", "current"], ["token", "list"]], ids=["db", "token"])
def test_a_command_that_only_reads_leaves_no_empty_folder(
    tmp_path, capsys, monkeypatch, argv: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROOFGUARD_DATABASE_URL", raising=False)
    assert "no history store at" in _error(capsys, argv)
    assert list(tmp_path.iterdir()) == []


#: SQLite's default page size: the first page, the schema's, is left whole.
SQLITE_PAGE = 4096
FOREIGN = "this database holds tables that are not a roofguard store (runs)"


def test_a_database_of_another_application_is_not_called_empty(tmp_path, capsys) -> None:
    """Read as empty, it was told to run `db upgrade`, which failed on "table runs exists"."""
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, note TEXT)")
    for argv in _commands(tmp_path):
        err = _error(capsys, [*argv, "--db", f"sqlite:///{other}"])
        assert FOREIGN in err and "point --db at an empty database" in err, argv
    with sqlite3.connect(other) as conn:
        tables = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    assert tables == [("runs",)]


@pytest.mark.postgres
def test_a_postgres_database_of_another_application_is_left_alone(postgres_url, capsys) -> None:
    """`db upgrade` there was "unexpected ProgrammingError: (psycopg.errors.DuplicateTable)"."""
    with scratch_database(postgres_url, "foreign") as url:
        engine = sa.create_engine(url)
        with engine.begin() as conn:
            conn.execute(sa.text("CREATE TABLE runs (id serial PRIMARY KEY, note text)"))
        for argv in (["db", "upgrade"], ["db", "current"]):
            assert FOREIGN in _error(capsys, [*argv, "--db", url]), argv
        assert sa.inspect(engine).get_table_names() == ["runs"]
        engine.dispose()


@pytest.mark.parametrize("damage", ["cut short", "pages overwritten"])
def test_a_damaged_store_is_named_and_called_damaged(tmp_path, capsys, damage: str) -> None:
    """It was "unexpected DatabaseError: ... database disk image is malformed", naming no file."""
    db = tmp_path / "h.db"
    assert run(["db", "upgrade", "--db", f"sqlite:///{db}"]) == 0
    if damage == "cut short":
        os.truncate(db, db.stat().st_size // 2)
    else:
        with db.open("r+b") as file:
            file.seek(SQLITE_PAGE)
            file.write(b"\xff" * SQLITE_PAGE * 8)
    capsys.readouterr()
    for argv in [*_commands(tmp_path), ["digest"]]:
        err = _error(capsys, [*argv, "--db", f"sqlite:///{db}"])
        assert f"history store {db} is damaged (database disk image is malformed)" in err, argv
