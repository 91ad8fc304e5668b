"""Upload claims keep their answer compressed and only as long as a retry may come
(``service.store.claims``), on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
from datetime import timedelta

import sqlalchemy as sa
from both_backends import both_backends_engine  # noqa: F401  (the fixture ``engine``)

from service.store import claims
from service.store.claims import Held
from service.store.db import session_scope
from service.store.tables import UploadClaim, table_of, utcnow

LEASE = timedelta(minutes=1)
_CLAIMS = table_of(UploadClaim)


def verdict_like(kernels: int) -> str:
    """An answer shaped like a verdict's JSON: one repetitive row per kernel."""
    rows = [
        {"key": f"gemv_{k:05d}", "status": "ok", "percent_of_roof": 80 + k % 7}
        for k in range(kernels)
    ]
    return json.dumps({"verdict": {"kernels": rows}, "markdown": "## roofguard\n" * 50})


def answered(engine: sa.Engine, key: str, text: str) -> None:
    assert claims.take(engine, key, repo="o/r", owner="a", lease=LEASE).held is Held.OWNED
    with session_scope(engine) as session:
        claims.answer(session, key, run_id=None, answer_json=text)  # type: ignore[arg-type]


def stored_bytes(engine: sa.Engine, key: str) -> bytes:
    with engine.connect() as conn:
        return conn.execute(
            sa.select(_CLAIMS.c.answer).where(_CLAIMS.c.upload_key == key)
        ).scalar_one()


def test_an_answer_comes_back_as_given_and_is_stored_compressed(engine: sa.Engine) -> None:
    text = verdict_like(2000)
    answered(engine, "k1", text)
    taken = claims.take(engine, "k1", repo="o/r", owner="b", lease=LEASE)
    peeked = claims.peek(engine, "k1")
    assert taken.held is Held.ANSWERED and taken.answer_json == text
    assert peeked is not None and peeked.held is Held.ANSWERED and peeked.answer_json == text
    assert len(stored_bytes(engine, "k1")) < len(text.encode()) / 5


def test_a_pending_claim_has_no_answer_until_it_is_answered(engine: sa.Engine) -> None:
    assert claims.take(engine, "k2", repo="o/r", owner="a", lease=LEASE).held is Held.OWNED
    assert claims.take(engine, "k2", repo="o/r", owner="b", lease=LEASE).held is Held.PENDING
    peeked = claims.peek(engine, "k2")
    assert peeked is not None and peeked.held is Held.PENDING and peeked.answer_json is None


def test_answers_are_kept_for_retries_then_forgotten_after_an_hour(engine: sa.Engine) -> None:
    for key, minutes in (("retry window", 30), ("old", 61)):  # `roofguard upload` retries 30 min
        answered(engine, key, verdict_like(3))
        with engine.begin() as conn:
            past = utcnow() - timedelta(minutes=minutes)
            stmt = sa.update(_CLAIMS).where(_CLAIMS.c.upload_key == key)
            conn.execute(stmt.values(claimed_at=past, lease_until=past))
    claims.take(engine, "new", repo="o/r", owner="a", lease=LEASE)
    assert claims.peek(engine, "old") is None
    assert claims.peek(engine, "retry window") is not None
    assert claims.peek(engine, "new") is not None


def test_the_migration_goes_down_and_up_keeping_pending_claims(engine: sa.Engine) -> None:
    from alembic import command

    from service.store.db import HEAD_REVISION, alembic_config, current_revision

    answered(engine, "done", verdict_like(3))
    claims.take(engine, "waiting", repo="o/r", owner="a", lease=LEASE)
    with engine.begin() as conn:
        command.downgrade(alembic_config(conn), "0009")
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "head")
    assert current_revision(engine) == HEAD_REVISION
    assert claims.peek(engine, "done") is None  # answers are a cache: dropped
    waiting = claims.peek(engine, "waiting")
    assert waiting is not None and waiting.held is Held.PENDING
