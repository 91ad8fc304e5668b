"""What a store's URL names: a SQLite file that exists and is one, a driver installed.

Each refusal is one line naming the path or URL (never its password): SQLite itself says
"unable to open database file" or "file is not a database", naming no file.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from service.errors import BadInput, ServiceError


def refuse_missing_file(url: sa.engine.URL) -> None:
    """BadInput when ``url``'s SQLite file does not exist (an in-memory store is never one)."""
    if not url.database or url.database == ":memory:" or Path(url.database).exists():
        return
    raise BadInput(
        f"--db: no history store at {Path(url.database).resolve()} ({url}): nothing was "
        "ever stored there; check the path (`roofguard check`, `roofguard ingest` and "
        "`roofguard db upgrade` create a store)"
    )


#: The first bytes of every SQLite database file (an empty file is an empty database too).
_SQLITE_HEADER = b"SQLite format 3\x00"


def refuse_other_file(url: sa.engine.URL) -> None:
    """BadInput when ``url``'s file exists and is no SQLite database (a report, a typo'd path).

    SQLite says only "file is not a database", on the first statement, naming no file.
    """
    if not url.database or url.database == ":memory:":
        return
    path = Path(url.database)
    try:
        with path.open("rb") as file:
            head = file.read(len(_SQLITE_HEADER))
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return  # SQLite makes the file, or says why it cannot
    if head and head != _SQLITE_HEADER:
        raise BadInput(f"--db: {path.resolve()} is not a roofguard history store (not SQLite)")


def not_a_store(shown: str) -> BadInput:
    """The error of a URL no driver here opens (a typo of the scheme, a bare path)."""
    return BadInput(
        f"database URL {shown!r} is not one roofguard can open: use sqlite:///PATH or "
        "postgresql+psycopg://USER@HOST/DATABASE (--db, or ROOFGUARD_DATABASE_URL)"
    )


#: Driver module -> the roofguard extra that installs it.
DRIVER_EXTRAS = {"psycopg": "postgres"}


class MissingDriver(ServiceError):
    """The database URL needs a driver that is not installed (an extra of roofguard)."""

    exit_code = 2

    def __init__(self, url: sa.engine.URL, exc: ImportError) -> None:
        module = (exc.name or str(exc)).split(".")[0]
        where = url.render_as_string(hide_password=True)
        extra = DRIVER_EXTRAS.get(module)
        if extra:
            hint = f"install it with: pip install 'roofguard[{extra}]'"
        else:
            hint = "install it, or use postgresql+psycopg:// (pip install 'roofguard[postgres]')"
        super().__init__(
            f"history store {where}: the database driver {module!r} is not installed; {hint}"
        )
