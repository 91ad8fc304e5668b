"""Repository names ignore letter case in the store too (migration 0006 merges twins).

The concurrent first uploads that made such twins are a PostgreSQL case
(``test_store_postgres``); here, a store that already holds twins is migrated: one history
remains, with nothing lost and nothing stored twice.
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command

from service.cli import run
from service.store.db import alembic_config, make_engine

RUN = (
    "INSERT INTO runs (id, repo_id, device_id, kind, timestamp, roof_source, roof_label, "
    "roof_json, trusted, content_hash, record_json, created_at) VALUES "
    "(:id, :repo, 1, 'nightly', :t, 'datasheet', 'H100', '{}', :yes, :h, '{}', :made)"
)
KERNEL = "INSERT INTO kernels (id, repo_id, key, key_hash, name) VALUES (:id, :repo, :k, :h, :n)"
MEASUREMENT = (
    "INSERT INTO measurements (run_id, kernel_id, launches, time_s, flops_json, borderline, "
    "roof_source) VALUES (:run, :kernel, 1, 0.001, '{}', :no, 'datasheet')"
)
ACCEPTANCE = (
    "INSERT INTO baseline_acceptances (repo_id, kernel_key, kernel_key_hash, run_id, "
    "accepted_by, reason, created_at) VALUES (2, 'x', 'x', 20, 'octocat', '', :t)"
)
TOKEN = (
    "INSERT INTO api_tokens (name, token_hash, repo_id, permission, created_at) "
    "VALUES ('ci', 'hash', 2, 'write', :t)"
)


WHEN = {"t": datetime(2026, 1, 1, tzinfo=UTC)}


def twins_at_0005(url: str) -> None:
    """Repository 2 is repository 1 in other letters: one run and one kernel in both."""
    engine = make_engine(url)
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "0005")
    with engine.begin() as conn:
        for repo_id, name in ((1, "acme/kernels"), (2, "Acme/Kernels")):
            conn.execute(
                sa.text("INSERT INTO repositories (id, name, created_at) VALUES (:i, :n, :t)"),
                {"i": repo_id, "n": name, **WHEN},
            )
        conn.execute(sa.text("INSERT INTO devices (name, created_at) VALUES ('H100', :t)"), WHEN)
        for run_id, repo_id, content in ((10, 1, "same"), (20, 2, "same"), (21, 2, "other")):
            row = {"id": run_id, "repo": repo_id, "h": content, "yes": True}
            conn.execute(sa.text(RUN), {**row, **WHEN, "made": WHEN["t"]})
        for kernel_id, repo_id, key in ((1, 1, "x"), (2, 2, "x"), (3, 2, "y")):
            conn.execute(
                sa.text(KERNEL), {"id": kernel_id, "repo": repo_id, "k": key, "h": key, "n": key}
            )
        for run_id, kernel_id in ((10, 1), (20, 2), (21, 2), (21, 3)):
            conn.execute(sa.text(MEASUREMENT), {"run": run_id, "kernel": kernel_id, "no": False})
        conn.execute(sa.text(ACCEPTANCE), WHEN)
        conn.execute(sa.text(TOKEN), WHEN)
    engine.dispose()


def _rows(engine: sa.Engine, query: str) -> list[tuple[object, ...]]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(sa.text(query))]


def test_the_upgrade_merges_repositories_that_differ_only_in_case(tmp_path) -> None:
    upgrade_merges_twins(f"sqlite:///{tmp_path / 'twins.db'}")


def upgrade_merges_twins(url: str) -> None:
    """The twins of ``twins_at_0005`` after ``roofguard db upgrade`` (PostgreSQL runs it too)."""
    twins_at_0005(url)
    assert run(["db", "upgrade", "--db", url]) == 0  # the command users run
    engine = make_engine(url)
    assert _rows(engine, "SELECT id, name FROM repositories") == [(1, "acme/kernels")]
    assert _rows(engine, "SELECT id, repo_id FROM runs ORDER BY id") == [(10, 1), (21, 1)]
    assert _rows(engine, "SELECT id, repo_id FROM kernels ORDER BY id") == [(1, 1), (3, 1)]
    measured = "SELECT run_id, kernel_id FROM measurements ORDER BY run_id, kernel_id"
    assert _rows(engine, measured) == [(10, 1), (21, 1), (21, 3)]
    assert _rows(engine, "SELECT repo_id, run_id FROM baseline_acceptances") == [(1, 10)]
    assert _rows(engine, "SELECT repo_id FROM api_tokens") == [(1,)]
    engine.dispose()
