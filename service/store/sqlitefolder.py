"""A SQLite store in a folder this process cannot write: read where it can be, named where not.

SQLite in WAL mode makes ``-wal`` and ``-shm`` files beside the database on open, even to
read: in a read-only folder (a mounted artifact, a read-only checkout) every command said
"unable to open database file". With no write-ahead log left there, nothing can have
changed the file since it was closed, so it is opened ``immutable``: read, never written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine

from service.errors import StoreUnavailable


def folder_writable(path: Path) -> bool:
    """Whether this process may make files in ``path``'s folder (a read-only mount: no)."""
    return os.access(path.parent if str(path.parent) else Path("."), os.W_OK)


def make_folder(url: sa.engine.URL, path: Path) -> None:
    """Make the store file's folder, or StoreUnavailable naming it and why not."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a read-only working directory: ".roofguard" cannot be made
        raise StoreUnavailable(
            f"history store {url}: cannot make its folder {path.parent.absolute()}: "
            f"{exc.strerror or exc}; run where that folder can be written, or point --db "
            "at another store"
        ) from None


def open_read_only_where_needed(engine: Engine, path: Path) -> None:
    """Open ``path`` read-only when its folder is not writable (immutable without a log).

    A write-ahead log left there may hold committed pages: read through it (``mode=ro``,
    which needs its ``-shm`` too) rather than past it.
    """
    if not path.exists() or folder_writable(path):
        return
    uri = f"{path.absolute().as_uri()}?mode=ro"

    @event.listens_for(engine, "do_connect")
    def _read_only(_dialect: Any, _record: Any, cargs: list[Any], cparams: dict[str, Any]) -> None:
        # Asked at each connect: the file's owner may write it meanwhile (their folder, not ours).
        has_log = Path(f"{path}-wal").exists()
        cargs[:] = [uri if has_log else f"{uri}&immutable=1"]
        cparams["uri"] = True


def read_only_hint(engine: Engine) -> str:
    """Why a SQLite store cannot be opened or written, when its folder is read-only; else ''."""
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        return ""
    path = Path(database)
    if folder_writable(path):
        return ""
    return (
        f"; its folder {path.parent.absolute()} is not writable (commands that only read "
        "work there, those that store need a writable folder)"
    )
