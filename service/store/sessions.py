"""What the store's functions need of a session, and a Core one that imports no ORM.

Every store statement is SQLAlchemy Core (``service.store.coretables``), so a store function
needs four things of its session: ``execute``, a savepoint (``begin_nested``), the
``connection`` of its transaction and the bind whose dialect it asks. A sqlmodel ``Session``
has them (the service opens those, ``service.store.db.session_scope``), and so has
``CoreSession``, a transaction on one Connection (``service.store.db.core_scope``):
``roofguard check`` judges through it, so its process never imports sqlmodel or SQLAlchemy's
ORM.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import sqlalchemy as sa
    from sqlalchemy.engine import Result
    from sqlalchemy.sql.base import Executable


class StoreSession(Protocol):
    """A session of the history store: a sqlmodel ``Session`` or a ``CoreSession``."""

    def execute(self, statement: Executable, params: Any = None, /) -> Result[*tuple[Any, ...]]:
        """Run a Core statement in the session's transaction."""
        ...

    def begin_nested(self) -> AbstractContextManager[Any]:
        """A savepoint: leaving it on an error rolls back to it, the transaction goes on."""
        ...

    def connection(self) -> sa.Connection:
        """The connection of the session's transaction (the raw-row readers use it)."""
        ...

    def get_bind(self) -> sa.Engine | sa.Connection:
        """What the session runs on; its ``dialect`` says which database this is."""
        ...


class CoreSession:
    """A store session on one Connection inside its transaction (see ``db.core_scope``)."""

    def __init__(self, connection: sa.Connection) -> None:
        self._connection = connection

    def execute(self, statement: Executable, params: Any = None, /) -> Result[*tuple[Any, ...]]:
        """Run ``statement`` (with ``params``: one mapping, or a list for executemany)."""
        return self._connection.execute(statement, params)

    def begin_nested(self) -> sa.NestedTransaction:
        """A savepoint in the transaction."""
        return self._connection.begin_nested()

    def connection(self) -> sa.Connection:
        """The transaction's connection."""
        return self._connection

    def get_bind(self) -> sa.Connection:
        """The connection: its ``dialect`` is the store's."""
        return self._connection
