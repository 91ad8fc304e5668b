"""A driver's error as one ``StoreUnavailable`` that names the store and says what to do.

Locked, unreachable, damaged: SQLite's own words ("database disk image is malformed",
"unable to open database file") name no file, and a damaged file's error is a
``DatabaseError``, not the ``OperationalError`` of the others: it came out as "unexpected".
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from service.errors import StoreUnavailable
from service.store.sqlitefolder import read_only_hint


def describe(engine: Engine) -> str:
    """The store's URL without its password, for messages."""
    return engine.url.render_as_string(hide_password=True)


_UNREACHABLE = (
    "connect",
    "unable to open",
    "refused",
    "timeout",
    "timed out",
    "resolve",
    "translate host",
    "no route",
    "password authentication",
    "does not exist",
)
#: SQLite's words for a file whose pages are not a database's any more (cut short, overwritten).
_DAMAGED = ("malformed", "file is not a database")


def _first_line(exc: BaseException) -> str:
    return str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]


def is_store_failure(exc: sa.exc.DatabaseError) -> bool:
    """Whether ``exc`` is the store's failure (locked, gone, damaged), not a statement's own."""
    damaged = any(word in _first_line(exc).lower() for word in _DAMAGED)
    return isinstance(exc, sa.exc.OperationalError) or damaged


def unavailable(engine: Engine, exc: BaseException) -> StoreUnavailable:
    """Translate a driver error into one clear StoreUnavailable."""
    text = _first_line(exc)
    where, lowered = describe(engine), text.lower()
    if "locked" in lowered or "busy" in lowered or "lock timeout" in lowered:
        return StoreUnavailable(
            f"history store {where} is locked by another writer (waited for the busy "
            f"timeout): {text}; retry when the other roofguard process has finished"
        )
    if any(word in lowered for word in _DAMAGED) and engine.url.database:
        return StoreUnavailable(
            f"history store {Path(engine.url.database).resolve()} is damaged ({text}): "
            "restore it from a backup, or recover what is left with `sqlite3 FILE .recover`"
        )
    if "readonly" in lowered:  # SQLite's "attempt to write a readonly database"
        hint = read_only_hint(engine) or "; make the file writable"
        return StoreUnavailable(f"history store {where} is read-only: {text}{hint}")
    if any(word in lowered for word in _UNREACHABLE):
        return StoreUnavailable(
            f"history store {where} is unreachable: {text}{read_only_hint(engine)}"
        )
    return StoreUnavailable(
        f"history store {where} failed: {text} (does it match this roofguard? "
        "see `roofguard db current`)"
    )


@contextmanager
def store_failures(engine: Engine) -> Iterator[None]:
    """The store's failures inside raised as ``unavailable``; a statement's errors as they are."""
    try:
        yield
    except sa.exc.DatabaseError as exc:
        if not is_store_failure(exc):
            raise
        raise unavailable(engine, exc) from exc
