"""Migration 0012: ``runs.judged``, NULL for a run stored without a check, on both backends."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from both_backends import both_backends_engine
from factories import make_kernel, make_run

from rules import builtin_catalog, place_run
from service.store.db import alembic_config, session_scope
from service.store.ingest import ingest_run
from service.store.queries import run_judged

__all__ = ["both_backends_engine"]

ROOF = builtin_catalog().lookup("H100-SXM5").roof()


def _ingested(engine: sa.Engine) -> int:
    run = make_run(
        repo="acme/judged",
        commit="c1",
        timestamp=datetime(2026, 11, 1, 2, tzinfo=UTC),
        kernels=[make_kernel("gemm", time_s=1e-3)],
    )
    with session_scope(engine) as session:
        placed = place_run(run, ROOF)
        return ingest_run(session=session, run=run, placements=placed, roof=ROOF).run_id


def test_runs_stored_before_the_migration_read_their_findings_as_before(engine) -> None:
    from alembic import command

    run_id = _ingested(engine)
    with session_scope(engine, readonly=True) as session:
        assert run_judged(session=session, run_id=run_id) is None  # ingest: never checked
    with engine.begin() as conn:
        command.downgrade(alembic_config(conn), "0011")
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "head")
    with session_scope(engine, readonly=True) as session:
        # stored before runs recorded it: its stored findings are its verdict
        assert run_judged(session=session, run_id=run_id) is True
        assert run_judged(session=session, run_id=run_id + 1000) is None
