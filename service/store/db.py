"""Engines, sessions and migrations of the history store.

SQLite is the default (``.roofguard/history.db`` in the working directory, WAL, busy timeout,
foreign keys on); any SQLAlchemy URL works, PostgreSQL through psycopg. Database failures
(locked, unreachable, migrations behind) surface as ONE ``StoreUnavailable`` with a message
that says what to do, and a failed transaction leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine

from service.errors import StoreUnavailable
from service.store.migrating import one_migrator_at_a_time, refuse_foreign_tables
from service.store.sessions import CoreSession
from service.store.sqlitefolder import make_folder, open_read_only_where_needed
from service.store.storefailures import describe as describe  # the messages' name of a store
from service.store.storefailures import is_store_failure, store_failures, unavailable
from service.store.storeurl import (
    MissingDriver,
    not_a_store,
    refuse_missing_file,
    refuse_other_file,
)

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlmodel import Session

#: The newest migration shipped (``service/store/migrations/versions``; a test holds it to
#: Alembic's head). Written out so that opening a store does not import Alembic and parse
#: every migration script: that was a tenth of a ``roofguard check`` process's start-up.
HEAD_REVISION = "0017"

#: The default store, relative to the working directory.
DEFAULT_SQLITE_PATH = Path(".roofguard") / "history.db"
#: Environment variable naming the database URL (read by the CLI, passed down from there).
DATABASE_URL_ENV = "ROOFGUARD_DATABASE_URL"
DEFAULT_BUSY_TIMEOUT_S = 5.0
UPGRADE_HINT = "run `roofguard db upgrade`"


def default_url() -> str:
    """The SQLite URL of the default store in the working directory.

    Its folder is made by ``make_engine`` when a store is made there: a command that only
    reads, refused for want of a store, left an empty ``.roofguard/`` behind.
    """
    return f"sqlite:///{DEFAULT_SQLITE_PATH}"


def _sqlite_pragmas(engine: Engine, busy_timeout_s: float) -> None:
    """WAL, busy timeout and foreign keys on every connection; we emit BEGIN ourselves.

    pysqlite's own transaction handling defers BEGIN and breaks SAVEPOINT; taking it over
    lets a writing session start with ``BEGIN IMMEDIATE``, so a concurrent writer waits for
    the busy timeout instead of failing half-way through an ingest.
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        mode = conn.get_execution_options().get("sqlite_begin", "IMMEDIATE")
        conn.exec_driver_sql(f"BEGIN {mode}")


def make_engine(
    url: str | None = None,
    *,
    busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
    existing: bool = False,
) -> Engine:
    """An engine for ``url`` (default: the SQLite file ``.roofguard/history.db``).

    Args:
        url: Any SQLAlchemy URL; ``postgresql+psycopg://...`` for PostgreSQL.
        busy_timeout_s: How long SQLite waits for another writer (and PostgreSQL for a
            connection) before the store is reported unavailable.
        existing: Refuse a SQLite file that does not exist (a command that only reads:
            a mistyped path would create an empty store and read "nothing" from it).
    """
    url = url or default_url()
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError:  # shown without what may be a password before an @
        raise not_a_store(url.rpartition("@")[2]) from None
    if parsed.get_backend_name() == "sqlite":
        if existing:
            refuse_missing_file(parsed)
        refuse_other_file(parsed)
        engine = sa.create_engine(
            parsed, connect_args={"timeout": busy_timeout_s}, hide_parameters=True
        )
        if parsed.database and parsed.database != ":memory:":
            make_folder(parsed, Path(parsed.database))
            open_read_only_where_needed(engine, Path(parsed.database))
        _sqlite_pragmas(engine, busy_timeout_s)
        return engine
    connect_args: dict[str, Any] = {}
    if parsed.get_backend_name() == "postgresql":
        # Same promise as SQLite's busy timeout: a locked table is an error, not a hang.
        connect_args["options"] = f"-c lock_timeout={int(busy_timeout_s * 1000)}"
        if "connect_timeout" not in parsed.query:
            connect_args["connect_timeout"] = max(1, int(busy_timeout_s))
    try:
        # hide_parameters: a driver error's message (logged with its traceback) never carries
        # the values of a statement: uploaded names, webhook fields, hashes.
        return sa.create_engine(
            parsed, connect_args=connect_args, pool_pre_ping=True, hide_parameters=True
        )
    except ImportError as exc:  # SQLAlchemy imports the driver here
        raise MissingDriver(parsed, exc) from None
    except sa.exc.NoSuchModuleError:  # no such dialect: bogus://, a typo of postgresql
        raise not_a_store(parsed.render_as_string(hide_password=True)) from None


@contextmanager
def session_scope(engine: Engine, *, readonly: bool = False) -> Iterator[Session]:
    """A session that commits once at the end, or rolls back everything on any error.

    Database errors (locked, unreachable) are re-raised as ``StoreUnavailable``.

    Args:
        engine: From ``make_engine``.
        readonly: Start SQLite transactions deferred (readers never wait for writers in WAL).
    """
    from sqlmodel import Session  # the ORM: only for the callers that want its session

    bind = _reader(engine) if readonly else engine
    session = Session(bind=bind, expire_on_commit=False)
    try:
        with _rolled_back_on_error(engine, lambda: session):
            yield session
            session.commit()
    finally:
        session.close()


@contextmanager
def core_scope(engine: Engine, *, readonly: bool = False) -> Iterator[CoreSession]:
    """``session_scope`` on one Core connection: the same transaction, without the ORM.

    Every store function takes it (``service.store.sessions``); ``roofguard check`` judges
    through it, so its process does not import sqlmodel and SQLAlchemy's ORM.
    """
    bind = _reader(engine) if readonly else engine
    connection: sa.Connection | None = None
    try:
        with _rolled_back_on_error(engine, lambda: connection):
            connection = bind.connect()
            transaction = connection.begin()
            yield CoreSession(connection)
            transaction.commit()
    finally:
        if connection is not None:
            connection.close()


@contextmanager
def _rolled_back_on_error(
    engine: Engine, transaction: Callable[[], Session | sa.Connection | None]
) -> Iterator[None]:
    """Roll ``transaction()`` back on any error; a database error is ``StoreUnavailable``.

    ``transaction`` is called on the error: a connection is made inside the block.
    """
    try:
        yield
    except sa.exc.DatabaseError as exc:
        _roll_back(transaction())
        if not is_store_failure(exc):
            raise
        raise unavailable(engine, exc) from exc
    except BaseException:
        _roll_back(transaction())
        raise


def _roll_back(session: Session | sa.Connection | None) -> None:
    """Roll back after an error; on a connection the server cut, give the connection up.

    The server has already dropped the transaction, and the rollback itself can fail there
    (psycopg: "cannot exit pipeline mode while busy"). Raised, that error would replace the
    one that says what happened, and the caller would not retry a dropped connection: a
    storm of cut connections (``test_api_faults.py``) once answered an upload 500 that way.
    """
    if session is None:  # no connection was made: nothing to roll back
        return
    try:
        session.rollback()
    except sa.exc.DBAPIError:
        session.invalidate()


def alembic_config(connection: sa.Connection | None = None) -> Config:
    """Alembic configuration pointing into the packaged ``service/store/migrations``."""
    from alembic.config import Config

    config = Config()
    location = resources.files("service.store").joinpath("migrations")
    config.set_main_option("script_location", str(location))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest migration shipped with this roofguard."""
    return HEAD_REVISION


def _reader(engine: Engine) -> Engine:
    """The engine, starting SQLite transactions deferred (reads never wait for writers)."""
    return engine.execution_options(sqlite_begin="DEFERRED")


def current_revision(engine: Engine) -> str | None:
    """The migration the database is at (None for an empty one; another app's is refused)."""
    with store_failures(engine), _reader(engine).connect() as conn:
        if not sa.inspect(conn).has_table("alembic_version"):
            refuse_foreign_tables(conn, describe(engine))
            return None
        version = conn.execute(sa.text("SELECT version_num FROM alembic_version"))
        return version.scalar_one_or_none()


def migrate(
    engine: Engine,
    on_step: Callable[[str], None] | None = None,
    on_wait: Callable[[], None] | None = None,
) -> str | None:
    """Upgrade the database to the newest migration (``alembic upgrade head``); returns it.

    ``on_step`` is called with each migration's revision once it is applied; ``on_wait``
    once, when another process is migrating the store and this one waits for it to finish
    (``service.store.migrating``).
    """
    from alembic import command

    with (
        store_failures(engine),
        engine.connect() as conn,
        one_migrator_at_a_time(conn, on_wait),
    ):
        config = alembic_config(conn)
        config.attributes["on_step"] = on_step
        command.upgrade(config, "head")
    return head_revision()


def pending_migrations(engine: Engine) -> list[str]:
    """The migrations ``migrate`` would apply, oldest first: ``0012: runs judged …``."""
    from alembic.script import ScriptDirectory

    current = current_revision(engine)
    refuse_newer(engine, current)  # Alembic knows no such revision: "ResolutionError"
    scripts = ScriptDirectory.from_config(alembic_config())
    pending = scripts.iterate_revisions("head", current or "base")
    return [f"{script.revision}: {script.doc}" for script in reversed(list(pending))]


def _is_empty(engine: Engine) -> bool:
    with _reader(engine).connect() as conn:
        return not sa.inspect(conn).get_table_names()


def newer_than_this(current: str | None) -> bool:
    """Whether a newer roofguard migrated the store past this one's newest migration."""
    return current is not None and current > HEAD_REVISION  # revisions: "0001", "0002", ...


def refuse_newer(engine: Engine, current: str | None) -> None:
    """StoreUnavailable when ``newer_than_this(current)``: upgrading roofguard is the way out.

    ``roofguard db upgrade``, the advice for a store behind, failed there on a revision
    Alembic does not know, and the other commands kept asking for it.
    """
    if newer_than_this(current):
        raise StoreUnavailable(
            f"history store {describe(engine)} is at migration {current}, newer than this "
            f"roofguard's newest ({HEAD_REVISION}): a newer roofguard upgraded it; install "
            "that version (`pip install -U roofguard`): a store cannot be migrated back"
        )


def ensure_current(engine: Engine) -> None:
    """Raise StoreUnavailable unless the store is reachable and at the newest migration."""
    current, head = current_revision(engine), head_revision()
    if current == head:
        return
    where = describe(engine)
    if current is None:
        raise StoreUnavailable(f"history store {where} is not initialised; {UPGRADE_HINT}")
    refuse_newer(engine, current)
    raise StoreUnavailable(
        f"history store {where} is at migration {current}, this roofguard needs {head}; "
        f"{UPGRADE_HINT}"
    )


def open_store(
    url: str | None = None, *, create: bool = True, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S
) -> Engine:
    """An engine on a store that is ready to use.

    A brand-new, empty database is created at the newest migration when ``create`` is true
    (so ``roofguard ingest`` works on a fresh checkout); without it (the commands that only
    read) a SQLite file that does not exist is refused. A store whose migrations are behind
    is never upgraded implicitly.

    Raises:
        StoreUnavailable: Unreachable, locked, or migrations behind.
        BadInput: ``create`` is false and the SQLite file does not exist.
    """
    engine = make_engine(url, busy_timeout_s=busy_timeout_s, existing=not create)
    try:
        with store_failures(engine):
            if create and _is_empty(engine):
                migrate(engine)
            ensure_current(engine)
    except BaseException:
        engine.dispose()  # no connection outlives a refused store
        raise
    return engine
