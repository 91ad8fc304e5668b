"""``roofguard token create|list|revoke``: API tokens of the roofguard service.

``create`` prints the new token alone on its last line, once: only its hash is stored, so it
cannot be shown again (create a new one and revoke the old one to rotate).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer
from sqlmodel import Session

from service.cli.db_cmd import DbOption
from service.cli.overview import HELP_MARKUP
from service.errors import BadInput
from service.store.db import ensure_current, make_engine, session_scope
from service.store.tokens import (
    Permission,
    TokenInfo,
    create_token,
    default_name,
    list_tokens,
    revoke_token,
)

token_app = typer.Typer(
    help="Create, list and revoke API tokens of the roofguard service.",
    no_args_is_help=True,
    rich_markup_mode=HELP_MARKUP,
)


@contextmanager
def _store(url: str | None) -> Iterator[Session]:
    """A session on a current store (tokens never create or upgrade a store implicitly)."""
    engine = make_engine(url, existing=True)
    try:
        ensure_current(engine)
        with session_scope(engine) as session:
            yield session
    finally:
        engine.dispose()


def _when(value: object) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value is not None else "-"  # type: ignore[attr-defined]


def _shown(name: str) -> str:
    """``name`` with each character a terminal would not print escaped, as Python writes it.

    A newline in a name stored before names were checked started a row of its own in
    ``token list``, one that could pass for another, active token.
    """
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in name)


def _refuse_unprintable(name: str) -> None:
    """Raise BadInput when ``name`` holds a control or other unprintable character."""
    for place, char in enumerate(name, start=1):
        if not char.isprintable():
            raise BadInput(
                f"--name: character {place} is {char!r}, not printable; a name is one line of "
                "printable text (`token list` shows one token a line)"
            )


def _line(info: TokenInfo) -> str:
    state = f"revoked {_when(info.revoked_at)}" if info.revoked_at else "active"
    return (
        f"{info.id:>5}  {info.repo:<32} {info.permission:<6} {_shown(info.name):<24} "
        f"created {_when(info.created_at)}  last used {_when(info.last_used_at)}  "
        f"{state}"
    )


@token_app.command("create")
def create_command(
    repo: Annotated[str, typer.Option(help="OWNER/NAME the token is scoped to.")],
    write: Annotated[
        bool, typer.Option("--write/--read", help="Allow uploads (--write) or only queries.")
    ] = False,
    name: Annotated[str | None, typer.Option(help="A name to recognise it by.")] = None,
    url: DbOption = None,
) -> None:
    """Create a token; it is printed once, alone on the last line."""
    permission = Permission.WRITE if write else Permission.READ
    label = name or default_name(repo, permission)
    _refuse_unprintable(label)
    with _store(url) as session:
        token_id, token = create_token(
            session=session, repo=repo, permission=permission, name=label
        )
    typer.echo(f"token {token_id} ({label!r}): {permission.value} access to {repo}", err=True)
    typer.echo("store it now: it is not shown again", err=True)
    typer.echo(token)


@token_app.command("list")
def list_command(
    repo: Annotated[str | None, typer.Option(help="Only tokens of OWNER/NAME.")] = None,
    url: DbOption = None,
) -> None:
    """List tokens (never the tokens themselves: they are not stored)."""
    with _store(url) as session:
        tokens = list_tokens(session=session, repo=repo)
    if not tokens:
        typer.echo("no tokens")
    for info in tokens:
        typer.echo(_line(info))


@token_app.command("revoke")
def revoke_command(
    token_id: Annotated[int, typer.Argument(help="Id from `roofguard token list`.")],
    url: DbOption = None,
) -> None:
    """Revoke a token; requests with it are refused from now on."""
    with _store(url) as session:
        info = revoke_token(session=session, token_id=token_id)
    typer.echo(f"token {info.id} ({info.name!r}, {info.repo}) revoked at {_when(info.revoked_at)}")


def register(app: typer.Typer) -> None:
    """Add ``roofguard token`` to ``app``."""
    app.add_typer(token_app, name="token")
