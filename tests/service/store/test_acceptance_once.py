"""A run's change is accepted once per kernel and card, however many deliveries race.

``accept_baseline`` looked for the acceptance, then inserted it: two deliveries of the same
``/roofguard accept`` at once (a retried webhook, two replicas) could each find none under
PostgreSQL's read committed and both store it. The ``uq_acceptances_run`` index (migration
0016) holds it once: the second insert answers the first's id. On SQLite and on PostgreSQL.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import timedelta

import pytest
import sqlalchemy as sa
from alembic import command
from scratchdb import scratch_database
from store_cases import REPO, day, nightly, store

from service.store.baselines import Recorded, accept_baseline
from service.store.coretables import BASELINE_ACCEPTANCES
from service.store.db import alembic_config, make_engine, migrate, session_scope
from service.store.ids import device_id, key_hash, repo_id

KERNEL = "a"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path) -> Iterator[str]:
    """An empty store's URL (not migrated): SQLite, or a PostgreSQL database of its own."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'history.db'}"
        return
    with scratch_database(request.getfixturevalue("postgres_url"), "accept") as url:
        yield url


@pytest.fixture
def engine(store_url: str) -> Iterator[sa.Engine]:
    engine = make_engine(store_url)
    migrate(engine)
    yield engine
    engine.dispose()


def _accept(engine: sa.Engine, run_id: int, device: str | None = "H100-SXM5") -> Recorded:
    with session_scope(engine) as session:
        return _accepted(session, run_id, device)


def _accepted(session, run_id: int, device: str | None, reason: str = "ok") -> Recorded:
    return accept_baseline(
        session=session,
        repo=REPO,
        kernel_key=KERNEL,
        device=device,
        accepted_by="octocat",
        reason=reason,
        run_id=run_id,
    )


def _rows(engine: sa.Engine) -> list[tuple[int, str]]:
    a = BASELINE_ACCEPTANCES.c
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(sa.select(a.id, a.reason).order_by(a.id))]


def _waiting_on_a_lock(engine: sa.Engine) -> bool:
    """Whether another PostgreSQL backend waits on a lock (the second insert, on the first)."""
    stmt = sa.text("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
    with engine.connect() as conn:
        return bool(conn.execute(stmt).scalar_one())


def _hold_until_waited_on(engine: sa.Engine) -> bool:
    """Wait until the second delivery waits on the first; whether PostgreSQL showed it did."""
    if engine.dialect.name != "postgresql":
        time.sleep(0.3)  # SQLite: the second writer waits at BEGIN IMMEDIATE
        return True
    deadline = time.monotonic() + 4.0  # inside the 5 s lock timeout
    while time.monotonic() < deadline:
        if _waiting_on_a_lock(engine):
            return True
        time.sleep(0.05)
    return False


def test_two_deliveries_at_once_store_one_acceptance(engine):
    run_id = store(engine, nightly(1))
    second: list[Recorded] = []
    with session_scope(engine) as session:
        first = _accepted(session, run_id, "H100-SXM5")  # not committed yet
        racer = threading.Thread(target=lambda: second.append(_accept(engine, run_id)))
        racer.start()
        waited = _hold_until_waited_on(engine)
    racer.join(timeout=30)
    assert waited, "the second insert waits on the first's uncommitted row"
    assert first.created and second == [Recorded(first.id, False)]
    assert _rows(engine) == [(first.id, "ok")]


def test_the_database_refuses_a_twin_run_acceptance_on_a_card_or_on_every_card(engine):
    run_id = store(engine, nightly(1))
    with session_scope(engine) as session:
        rid, did = (
            repo_id(session=session, repo=REPO),
            device_id(session=session, device="H100-SXM5"),
        )
    row = {"repo_id": rid, "kernel_key": KERNEL, "kernel_key_hash": key_hash(KERNEL)}
    row |= {"run_id": run_id, "accepted_by": "octocat", "reason": "", "created_at": day(2)}
    for device in (did, None):
        with engine.begin() as conn:
            conn.execute(sa.insert(BASELINE_ACCEPTANCES), {**row, "device_id": device})
        with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:
            conn.execute(sa.insert(BASELINE_ACCEPTANCES), {**row, "device_id": device})


def test_the_same_accept_again_answers_the_first_and_edits_are_not_runs(engine):
    run_id = store(engine, nightly(1))
    first = _accept(engine, run_id, device=None)
    assert _accept(engine, run_id, device=None) == Recorded(first.id, False)
    assert _accept(engine, run_id).created, "on a card: another acceptance than every card's"
    with session_scope(engine) as session:  # a work model's edit has no run: one a night
        for night in (2, 3):
            accept_baseline(
                session=session,
                repo=REPO,
                kernel_key=KERNEL,
                device="H100-SXM5",
                accepted_by="roofguard",
                reason="work model changed",
                accepted_at=day(night),
            )
    assert len(_rows(engine)) == 4


def _twin_rows(run_id: int, rid: int, did: int) -> list[dict[str, object]]:
    """Acceptances as concurrent deliveries left them: twins of one key, stored out of order."""
    row = {"repo_id": rid, "kernel_key": KERNEL, "kernel_key_hash": key_hash(KERNEL)}
    row |= {"run_id": run_id, "accepted_by": "octocat"}
    later, earlier = day(1) + timedelta(seconds=1), day(1)
    return [
        {**row, "device_id": did, "reason": "second", "created_at": later},
        {**row, "device_id": did, "reason": "first", "created_at": earlier},  # kept
        {**row, "device_id": did, "reason": "third", "created_at": later},
        {**row, "device_id": None, "reason": "every card", "created_at": earlier},  # kept
        {**row, "device_id": None, "reason": "every card again", "created_at": later},
        {**row, "device_id": did, "run_id": None, "reason": "edit", "created_at": later},  # kept
        {**row, "device_id": did, "run_id": None, "reason": "edit", "created_at": later},  # kept
    ]


def test_the_migration_keeps_the_earliest_of_each_twin(store_url):
    engine = make_engine(store_url)
    try:
        with engine.begin() as conn:
            command.upgrade(alembic_config(conn), "0015")
        run_id = store(engine, nightly(1))
        with session_scope(engine) as session:
            rid = repo_id(session=session, repo=REPO)
            did = device_id(session=session, device="H100-SXM5")
        assert rid is not None and did is not None
        with engine.begin() as conn:
            conn.execute(sa.insert(BASELINE_ACCEPTANCES), _twin_rows(run_id, rid, did))
        migrate(engine)
        assert [reason for _, reason in _rows(engine)] == ["first", "every card", "edit", "edit"]
        assert _accept(engine, run_id).id == _rows(engine)[0][0], "the kept one answers"
    finally:
        engine.dispose()
