"""Which run an ingest's inputs stored (``ingest_inputs``): a re-run ingest reads no file.

``service.pipeline.inputdigest`` digests what an ingest was given; the digest is kept with
the run in the ingest's own transaction, so it names a run only once that run is stored.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from service.store.coretables import INGEST_INPUTS as _INPUTS
from service.store.coretables import RUNS as _RUNS
from service.store.coretables import utcnow
from service.store.ids import as_utc, insert_ignore
from service.store.ingest import IngestResult
from service.store.sessions import StoreSession


def run_of_inputs(session: StoreSession, digest: str) -> int | None:
    """The run stored from inputs of this digest, while it holds the content it held; or None.

    The content hash is checked: a run deleted by hand where foreign keys were off (SQLite's
    shell) leaves its digests, and SQLite gives its id to the next run.
    """
    i, r = _INPUTS.c, _RUNS.c
    stmt = (
        sa.select(i.run_id)
        .join(_RUNS, sa.and_(r.id == i.run_id, r.content_hash == i.content_hash))
        .where(i.input_digest == digest)
    )
    found = session.execute(stmt).scalar()
    return None if found is None else int(found)


def stored_time(session: StoreSession, run_id: int) -> datetime | None:
    """The time run ``run_id`` was stored with (UTC), None when there is no such run."""
    found = session.execute(sa.select(_RUNS.c.timestamp).where(_RUNS.c.id == run_id)).scalar()
    return as_utc(found) if isinstance(found, datetime) else None


def remember_inputs(session: StoreSession, digest: str, stored: IngestResult) -> None:
    """Keep ``digest`` for the run stored; a digest kept already (a concurrent ingest) stays."""
    row = {
        "input_digest": digest,
        "run_id": stored.run_id,
        "content_hash": stored.content_hash,
        "created_at": utcnow(),
    }
    insert_ignore(session, _INPUTS, [row])
