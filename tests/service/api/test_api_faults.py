"""PostgreSQL connections cut during uploads (pg_terminate_backend from a second connection):
no partial run is left, every run is stored once, and the service recovers without a restart."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import sqlalchemy as sa
from load_driver import LoadResult, audit, big_run
from scratchdb import scratch_database
from svc_helpers import Service, start_live

pytestmark = pytest.mark.postgres

KILL = sa.text(
    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
)


@pytest.fixture
def db_url(postgres_url: str) -> Iterator[str]:
    """PostgreSQL only (overrides the SQLite-or-PostgreSQL parameter of the folder).

    A database of this test alone: KILL cuts every connection to it, and the worker's shared
    one may hold another module's live servers (xdist interleaves modules on a worker).
    """
    with scratch_database(postgres_url, "faults") as url:
        yield url


@pytest.fixture
def pg_service(make_service) -> Service:
    return make_service()


def test_connection_cut_in_the_middle_of_an_ingest(pg_service, repo, caplog) -> None:
    """The backend dies right after the run row is written: the retry stores it once."""
    admin = sa.create_engine(pg_service.engine.url, isolation_level="AUTOCOMMIT")
    state = {"cut": 0}

    def cut_once(conn, cursor, statement, *args) -> None:
        if state["cut"] == 0 and statement.lstrip().upper().startswith("INSERT INTO MEASUREMENTS"):
            state["cut"] += 1
            pid = conn.connection.dbapi_connection.info.backend_pid
            with admin.connect() as killer:
                killer.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})

    token = pg_service.token(repo)
    run = big_run(repo, 1, 200)
    sa.event.listen(pg_service.engine, "before_cursor_execute", cut_once)
    try:
        with caplog.at_level(logging.WARNING, logger="roofguard.api"):
            answer = pg_service.upload(run, token)
    finally:
        sa.event.remove(pg_service.engine, "before_cursor_execute", cut_once)
        admin.dispose()
    assert state["cut"] == 1
    assert answer.status_code == 201, answer.text
    assert any("attempt 1 failed" in r.getMessage() for r in caplog.records)
    result = LoadResult(answers=[(0, 201, answer.json()["run_id"], True)])
    audit(pg_service.engine, [run], result)


#: Cuts: every backend of the database, this many times, this far apart (while uploads run).
CUTS, CUT_EVERY_S = 8, 0.4


def _kill_storm(url: sa.URL, stop: threading.Event, kills: list[int]) -> None:
    admin = sa.create_engine(url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        for _ in range(CUTS):
            if stop.wait(CUT_EVERY_S):
                break
            with admin.connect() as conn:
                kills.append(int(conn.execute(KILL).scalar_one()))
    finally:
        admin.dispose()


def _upload_until_accepted(
    base: str, token: str, body: bytes, run_index: int, result: LoadResult, lock: threading.Lock
) -> None:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    for _ in range(20):  # what `roofguard upload` does: retry 503s, the upload is idempotent
        response = httpx.post(f"{base}/api/v1/runs", content=body, headers=headers, timeout=60)
        if response.status_code == 503:
            time.sleep(0.2)
            continue
        with lock:
            if response.status_code in (200, 201):
                answer = response.json()
                status, run_id = response.status_code, int(answer["run_id"])
                result.answers.append((run_index, status, run_id, bool(answer["created"])))
            else:  # audit names it, instead of a KeyError for a run that never answered
                result.errors.append(f"run {run_index}: {response.status_code} {response.text}")
        return
    with lock:
        result.errors.append(f"run {run_index}: still 503 after 20 tries")


def test_uploads_survive_a_storm_of_cut_connections(pg_service, repo) -> None:
    token = pg_service.token(repo)
    runs = [big_run(repo, i, 100) for i in range(6)]
    live = start_live(pg_service.app)
    stop, kills, result, lock = threading.Event(), [], LoadResult(), threading.Lock()
    storm = threading.Thread(target=_kill_storm, args=(pg_service.engine.url, stop, kills))
    clients = [
        threading.Thread(
            target=_upload_until_accepted,
            args=(live.url, token, r.model_dump_json().encode(), i, result, lock),
        )
        for i, r in enumerate(runs)
    ]
    try:
        storm.start()
        for client in clients:
            client.start()
        for client in clients:
            client.join()
        stop.set()
        storm.join()
        assert sum(kills) > 0, "the storm never cut a connection"
        # Recovered without a restart: ready, and a fresh upload goes through.
        assert httpx.get(f"{live.url}/readyz").status_code == 200
        late = big_run(repo, 99, 20)
        _upload_until_accepted(
            live.url, token, late.model_dump_json().encode(), len(runs), result, lock
        )
    finally:
        stop.set()
        live.stop()
    audit(pg_service.engine, [*runs, late], result)
    assert [a[1] for a in result.answers if a[0] == len(runs)] == [201]
