"""``roofguard db upgrade`` and ``roofguard db current``: the history store's migrations."""

from __future__ import annotations

from typing import Annotated

import typer

from service.cli.overview import HELP_MARKUP
from service.progress import steps
from service.store import db
from service.store.migrating import MIGRATION_WAIT_S

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        envvar=db.DATABASE_URL_ENV,
        help="SQLAlchemy URL of the history store (default: .roofguard/history.db).",
    ),
]


def upgrade_command(url: DbOption = None) -> None:
    """Create the history store or bring it to the newest migration."""
    engine = db.make_engine(url)
    where = db.describe(engine)
    applied: list[str] = []
    try:
        before, pending = db.current_revision(engine), db.pending_migrations(engine)
        with steps(pending, "migration") as advance:

            def one_applied(revision: str) -> None:
                applied.append(revision)
                advance()

            head = db.migrate(engine, on_step=one_applied, on_wait=lambda: _say_waiting(where))
    finally:
        engine.dispose()
    if not applied:  # at head already, or brought there by another process meanwhile
        typer.echo(f"history store {where} is already at migration {head} (newest)")
    else:
        count = f"{len(applied)} migration{'s' if len(applied) != 1 else ''}"
        typer.echo(f"history store {where} upgraded from {before or 'empty'} to {head} ({count})")


def _say_waiting(where: str) -> None:
    typer.echo(
        f"history store {where} is being migrated by another process: waiting for it "
        f"(at most {MIGRATION_WAIT_S // 60} minutes)",
        err=True,
    )


def current_command(url: DbOption = None) -> int:
    """Show the store's migration; exit 1 when it is behind this roofguard."""
    engine = db.make_engine(url, existing=True)  # a mistyped path leaves no empty store
    try:
        current, head = db.current_revision(engine), db.head_revision()
    finally:
        engine.dispose()
    where = db.describe(engine)
    if current == head:
        typer.echo(f"history store {where} is at migration {current} (newest)")
        return 0
    db.refuse_newer(engine, current)
    typer.echo(
        f"history store {where} is at migration {current or 'none (empty)'}, newest is "
        f"{head}; {db.UPGRADE_HINT}"
    )
    return 1


def register(app: typer.Typer) -> None:
    """Add the ``db`` command group to ``app``."""
    group = typer.Typer(
        help="Manage the history store's database.",
        no_args_is_help=True,
        rich_markup_mode=HELP_MARKUP,
    )
    group.command("upgrade")(upgrade_command)
    group.command("current")(current_command)
    app.add_typer(group, name="db")
