"""``roofguard db upgrade`` names the migrations it applies and shows each as a step.

A migration of its own can take minutes on a store of millions of rows (SQLite's batch mode
copies a table to alter it), so the upgrade draws a bar of its steps on a terminal.
"""

from __future__ import annotations

import io

import pytest
from alembic import command
from rich.console import Console

from service import progress
from service.cli import run as cli
from service.store.db import alembic_config, head_revision, make_engine, migrate, pending_migrations

LATER = [f"{n:04d}" for n in range(6, int(head_revision()) + 1)]  # after 0005


@pytest.fixture
def at_0005(tmp_path) -> str:
    """A SQLite store migrated to 0005 only, as a roofguard of that migration left it."""
    url = f"sqlite:///{tmp_path / 'history.db'}"
    engine = make_engine(url)
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "0005")
    engine.dispose()
    return url


def test_pending_migrations_name_each_step_oldest_first(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'new.db'}")
    pending = pending_migrations(engine)
    assert pending[0] == "0001: initial history store"
    assert [label.split(":")[0] for label in pending] == [f"{n:04d}" for n in range(1, 18)]
    migrate(engine)
    assert pending_migrations(engine) == []


def test_migrate_tells_the_caller_each_migration_it_applies(at_0005):
    engine = make_engine(at_0005)
    assert [label.split(":")[0] for label in pending_migrations(engine)] == LATER
    applied: list[str] = []
    assert migrate(engine, on_step=applied.append) == head_revision()
    assert applied == LATER


def test_the_command_says_how_many_it_applied(at_0005, capsys):
    assert cli(["db", "upgrade", "--db", at_0005]) == 0
    assert f"upgraded from 0005 to {head_revision()} ({len(LATER)} migrations)" in (
        capsys.readouterr().out
    )
    assert cli(["db", "upgrade", "--db", at_0005]) == 0
    assert "already at migration" in capsys.readouterr().out


def test_the_bar_names_the_step_under_way_and_outlasts_extra_calls():
    terminal = io.StringIO()
    console = Console(file=terminal, force_terminal=True, width=100)
    with progress.steps(["0006: a", "0007: b"], "migration", console) as applied:
        applied()
        applied()  # one more than there are steps: the last label stays
        applied()
    assert "migration: 0007: b" in terminal.getvalue()


def test_no_bar_in_ci(monkeypatch, capsys):
    monkeypatch.setenv("CI", "true")
    with progress.steps(["0006: a"], "migration") as applied:
        applied()
    assert capsys.readouterr().err == ""
