"""Which run an ingest's inputs stored (``ingest_inputs``): a re-run ingest reads no file.

``service.pipeline.inputdigest`` digests what an ingest was given; the digest is kept with
the run in the ingest's own transaction, so it names a run only once that run is stored.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from service.store.coretables import INGEST_INPUTS as _INPUTS
from service.store.coretables import utcnow
from service.store.sessions import StoreSession


def run_of_inputs(session: StoreSession, digest: str) -> int | None:
    """The run stored from inputs of this digest, or None."""
    stmt = sa.select(_INPUTS.c.run_id).where(_INPUTS.c.input_digest == digest)
    found = session.execute(stmt).scalar()
    return None if found is None else int(found)


def remember_inputs(session: StoreSession, digest: str, run_id: int) -> None:
    """Keep ``digest`` for ``run_id``; a digest kept already (a concurrent ingest) stays."""
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    stmt = dialect.insert(_INPUTS).values(input_digest=digest, run_id=run_id, created_at=utcnow())
    session.execute(stmt.on_conflict_do_nothing())
