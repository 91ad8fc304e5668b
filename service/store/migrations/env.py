"""Alembic environment: migrations run on the connection ``service.store.db`` hands in."""

from __future__ import annotations

from alembic import context
from alembic.runtime.migration import MigrationInfo
from sqlmodel import SQLModel

import service.store.tables  # noqa: F401  (registers the tables on SQLModel.metadata)

target_metadata = SQLModel.metadata


def _applied(ctx: object, step: MigrationInfo, heads: object, run_args: object) -> None:
    """Tell ``service.store.db.migrate``'s caller a migration is applied (its progress)."""
    on_step = context.config.attributes.get("on_step")
    if on_step is not None:
        on_step(step.up_revision_id)


def run_migrations_online() -> None:
    """Run the migrations on ``config.attributes["connection"]``."""
    connection = context.config.attributes.get("connection")
    if connection is None:
        raise RuntimeError("service.store.db.migrate passes the connection; run it from there")
    # Batch mode lets later migrations alter SQLite tables (copy-and-move).
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,
        compare_type=True,
        on_version_apply=_applied,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise RuntimeError("offline (SQL script) migrations are not supported")
run_migrations_online()
