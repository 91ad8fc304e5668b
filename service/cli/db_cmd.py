"""``roofguard db upgrade`` and ``roofguard db current``: the history store's migrations."""

from __future__ import annotations

from typing import Annotated

import typer

from service.cli.overview import HELP_MARKUP
from service.progress import steps
from service.store import db

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
    try:
        before, pending = db.current_revision(engine), db.pending_migrations(engine)
        with steps(pending, "migration") as applied:
            head = db.migrate(engine, on_step=lambda _revision: applied())
    finally:
        engine.dispose()
    where = db.describe(engine)
    if before == head:
        typer.echo(f"history store {where} is already at migration {head} (newest)")
    else:
        count = f"{len(pending)} migration{'s' if len(pending) != 1 else ''}"
        typer.echo(f"history store {where} upgraded from {before or 'empty'} to {head} ({count})")


def current_command(url: DbOption = None) -> int:
    """Show the store's migration; exit 1 when it is behind this roofguard."""
    engine = db.make_engine(url)
    try:
        current, head = db.current_revision(engine), db.head_revision()
    finally:
        engine.dispose()
    where = db.describe(engine)
    if current == head:
        typer.echo(f"history store {where} is at migration {current} (newest)")
        return 0
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
