"""Upload claims: which replica judges an upload, and the answer it gave (``upload_claims``).

Every replica of the service shares the store, so the claim's primary key (the upload's
key, a sha256 of its bytes) lets exactly one of them judge an upload while the others wait
for the answer stored with the claim, in the check's own transaction. The owner renews its
lease while it works; a claim whose lease lapsed (its replica died) is taken over by the
next replica that sees it. A check that fails gives its claim up, so a retry judges anew.
Nothing here lives in a process's memory: a retry may land on any replica.

The answer is stored zlib-compressed and kept an hour: a 2,000-kernel run's answer is about
3.3 MB of JSON, so a fleet uploading runs every second would otherwise keep gigabytes of
answers that no retry reads.
"""

from __future__ import annotations

import enum
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from service.store.coretables import UPLOAD_CLAIMS as _CLAIMS
from service.store.coretables import utcnow
from service.store.db import session_scope
from service.store.ids import insert_skipping_conflicts
from service.store.sessions import StoreSession

#: Answered claims are kept this long for the retries of their uploads, then forgotten
#: (an upload after that is judged anew and finds its run stored: ``created`` false).
#: ``roofguard upload`` uploads again after a 202 for at most 30 minutes.
KEEP = timedelta(hours=1)
#: zlib level of stored answers: level 1 shrinks a 2,000-kernel verdict's 3.3 MB of JSON to
#: 0.42 MB in 14 ms of CPU; level 6 to 0.34 MB in 35 ms, not worth it on every upload.
_ZLIB_LEVEL = 1


class Held(enum.Enum):
    """Where a claim stands for the replica that asked."""

    OWNED = "owned"  # this replica judges the upload
    PENDING = "pending"  # another replica (or this one, earlier) is judging it
    ANSWERED = "answered"  # judged: the answer is stored


@dataclass(frozen=True)
class ClaimState:
    """A claim as one replica found it: its standing and, once answered, the answer."""

    held: Held
    repo: str = ""
    run_id: int | None = None
    answer_json: str | None = None
    lapsed: bool = False  # pending, and its lease ran out: the next take takes it over


def take(engine: Engine, key: str, *, repo: str, owner: str, lease: timedelta) -> ClaimState:
    """Claim upload ``key`` for ``owner`` unless another holds a live claim or it is answered.

    One transaction: insert the claim (the primary key lets one replica win), else read it
    and take it over when its lease lapsed.
    """
    now = utcnow()
    with session_scope(engine) as session:
        if _insert(session, key, repo=repo, owner=owner, now=now, lease=lease):
            _forget_old(session, now)
            return ClaimState(Held.OWNED)
        c = _CLAIMS.c
        row = session.execute(
            sa.select(c.repo, c.lease_until, c.run_id, c.answer).where(c.upload_key == key)
        ).first()
        if row is None:  # given up between the insert and the read: claim it on the next try
            return ClaimState(Held.PENDING)
        if row.answer is not None:
            return ClaimState(Held.ANSWERED, row.repo, row.run_id, _unpacked(row.answer))
        if _take_over(session, key, owner=owner, now=now, lease=lease):
            return ClaimState(Held.OWNED)
        return ClaimState(Held.PENDING)


def _insert(
    session: StoreSession, key: str, *, repo: str, owner: str, now: datetime, lease: timedelta
) -> bool:
    stmt = insert_skipping_conflicts(session, _CLAIMS).values(
        upload_key=key, repo=repo, owner=owner, claimed_at=now, lease_until=now + lease
    )
    # RETURNING, not rowcount: through a StoreSession, psycopg's rowcount of this INSERT was -1.
    claimed = stmt.returning(_CLAIMS.c.upload_key)
    return session.execute(claimed).first() is not None


def peek(engine: Engine, key: str) -> ClaimState | None:
    """Upload ``key``'s claim as it stands, without claiming it; None when there is none."""
    c = _CLAIMS.c
    lapsed = sa.and_(c.answer.is_(None), c.lease_until < utcnow()).label("lapsed")
    stmt = sa.select(c.repo, c.run_id, c.answer, lapsed).where(c.upload_key == key)
    with session_scope(engine, readonly=True) as session:
        row = session.execute(stmt).first()
    if row is None:
        return None
    if row.answer is None:
        return ClaimState(Held.PENDING, row.repo, row.run_id, None, bool(row.lapsed))
    return ClaimState(Held.ANSWERED, row.repo, row.run_id, _unpacked(row.answer))


def _take_over(
    session: StoreSession, key: str, *, owner: str, now: datetime, lease: timedelta
) -> bool:
    """Take a pending claim whose lease lapsed; the ``WHERE`` lets one replica win."""
    c = _CLAIMS.c
    stmt = (
        sa.update(_CLAIMS)
        .where(c.upload_key == key, c.answer.is_(None), c.lease_until < now)
        .values(owner=owner, lease_until=now + lease)
        .returning(c.upload_key)
    )
    return session.execute(stmt).first() is not None


def _forget_old(session: StoreSession, now: datetime) -> None:
    c = _CLAIMS.c
    session.execute(sa.delete(_CLAIMS).where(c.claimed_at < now - KEEP, c.lease_until < now))


def renew(engine: Engine, key: str, *, owner: str, lease: timedelta) -> bool:
    """Extend ``owner``'s lease on a pending claim; False when it is no longer ``owner``'s."""
    c = _CLAIMS.c
    stmt = (
        sa.update(_CLAIMS)
        .where(c.upload_key == key, c.owner == owner, c.answer.is_(None))
        .values(lease_until=utcnow() + lease)
        .returning(c.upload_key)
    )
    with session_scope(engine) as session:
        return session.execute(stmt).first() is not None


def answer(session: StoreSession, key: str, *, run_id: int, answer_json: str) -> None:
    """Store the answer to upload ``key`` in the caller's (the check's) transaction.

    Whoever judged it last writes: a replica that lost its lease while judging judged the
    same content, and the run it found is the same stored run.
    """
    c = _CLAIMS.c
    session.execute(
        sa.update(_CLAIMS)
        .where(c.upload_key == key)
        .values(run_id=run_id, answer=_packed(answer_json), lease_until=utcnow())
    )


def forget_answers(session: StoreSession, run_id: int) -> None:
    """Drop the answers stored about run ``run_id``: its verdict changed since they were given.

    A maintainer accepted a change of it, or re-measurements replaced its findings; the same
    bytes uploaded again (a CI job re-run) then got the verdict from before, and its exit
    code. Without the answer they are judged again and say what changed, as ``check`` does.
    """
    c = _CLAIMS.c
    session.execute(sa.delete(_CLAIMS).where(c.run_id == run_id, c.answer.is_not(None)))


def _packed(answer_json: str) -> bytes:
    return zlib.compress(answer_json.encode(), _ZLIB_LEVEL)


def _unpacked(answer: bytes) -> str:
    return zlib.decompress(answer).decode()


def give_up(engine: Engine, key: str, *, owner: str) -> None:
    """Drop ``owner``'s pending claim (its check failed): the next upload judges anew."""
    c = _CLAIMS.c
    with session_scope(engine) as session:
        session.execute(
            sa.delete(_CLAIMS).where(c.upload_key == key, c.owner == owner, c.answer.is_(None))
        )
