"""Two real ``roofguard serve`` processes on one PostgreSQL: an upload is judged and stored
once whichever replica receives it (issue 29, goal 2).

The claim of an upload lives in the store (``upload_claims``), not in a process, so the same
upload sent to both replicas at the same moment is judged by one, and the other answers with
the verdict the first stored. A claim left by a replica that died is taken over once its
lease lapsed.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest
import sqlalchemy as sa
from load_driver import big_run
from replicas import ROOT, Replica, serving
from sqlalchemy.engine import Engine

from service.api.inflight import upload_key
from service.api.received import claim_key
from service.config import load_config
from service.pipeline.check import config_digest
from service.store.db import make_engine, migrate, session_scope
from service.store.tables import UploadClaim, table_of, utcnow
from service.store.tokens import Permission, create_token

pytestmark = pytest.mark.postgres

KERNELS = 600  # a check long enough (a few tenths of a second) for the uploads to overlap


@pytest.fixture(scope="module")
def store(postgres_url: str) -> Iterator[Engine]:
    engine = make_engine(postgres_url)
    migrate(engine)
    yield engine
    engine.dispose()


@pytest.fixture(scope="module")
def replicas(postgres_url: str, store: Engine) -> Iterator[list[Replica]]:
    # A short answer deadline: the waiting upload of the last test answers 202 sooner.
    with serving(postgres_url, 2, env={"ROOFGUARD_UPLOAD_ANSWER_S": "8"}) as started:
        yield started


def _token(engine: Engine, repo: str) -> str:
    with session_scope(engine) as session:
        return create_token(session=session, repo=repo, permission=Permission.WRITE, name="ci")[1]


def _post(url: str, body: bytes, token: str) -> httpx.Response:
    """Upload ``body``, again after each 202 as ``roofguard upload`` does (sooner here)."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    deadline = time.monotonic() + 120
    with httpx.Client(base_url=url, timeout=120) as client:
        while True:
            answer = client.post("/api/v1/runs", content=body, headers=headers)
            if answer.status_code != 202 or time.monotonic() > deadline:
                return answer
            time.sleep(0.2)


def _at_once(sends: list[tuple[str, bytes, str]]) -> list[httpx.Response]:
    """Each (replica URL, body, token) uploaded by its own thread, all at the same moment."""
    answers: list[httpx.Response | None] = [None] * len(sends)
    start = threading.Barrier(len(sends))

    def send(i: int) -> None:
        start.wait()
        answers[i] = _post(*sends[i])

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(sends))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(a is not None for a in answers)
    return [a for a in answers if a is not None]


def _runs_of(engine: Engine, repo: str) -> list[int]:
    stmt = sa.text(
        "SELECT runs.id FROM runs JOIN repositories r ON r.id = runs.repo_id "
        "WHERE r.name = :repo ORDER BY runs.id"
    )
    with engine.connect() as conn:
        return list(conn.execute(stmt, {"repo": repo}).scalars())


def _checks(replicas: list[Replica]) -> int:
    """Upload checks judged by all replicas together (their ``/metrics``)."""
    total = 0.0
    for replica in replicas:
        text = httpx.get(f"{replica.url}/metrics", timeout=10).text
        found = re.search(r"^roofguard_upload_checks_total (\S+)$", text, re.M)
        assert found, f"no upload check counter at {replica.url}/metrics"
        total += float(found[1])
    return int(total)


def test_the_same_upload_to_both_replicas_is_judged_and_stored_once(replicas, store) -> None:
    repo = "replicas/same"
    token = _token(store, repo)
    body = big_run(repo, 1, KERNELS).model_dump_json().encode()
    before = _checks(replicas)
    answers = _at_once([(replicas[i % 2].url, body, token) for i in range(6)])
    # One 201 at most: on a loaded machine the owner's own request may have been a 202.
    assert [a.status_code for a in answers].count(201) <= 1, [a.text[:200] for a in answers]
    assert all(a.status_code in (200, 201) for a in answers)
    assert len({a.json()["run_id"] for a in answers}) == 1
    same = {(a.json()["verdict"]["conclusion"], a.text.split('"verdict":', 1)[1]) for a in answers}
    assert len(same) == 1, "one verdict and markdown, as the check that stored the run gave them"
    assert _runs_of(store, repo) == [answers[0].json()["run_id"]]
    assert _checks(replicas) - before == 1, "one check for six uploads of the same run"


def test_distinct_uploads_spread_over_both_replicas_are_all_stored_once(replicas, store) -> None:
    repo = "replicas/distinct"
    token = _token(store, repo)
    bodies = [big_run(repo, 10 + i, 200).model_dump_json().encode() for i in range(6)]
    sends = [(replicas[i % 2].url, body, token) for i, body in enumerate(bodies)]
    answers = _at_once(sends + sends[::-1])  # each run to both replicas
    assert all(a.status_code in (200, 201) for a in answers), [a.text[:200] for a in answers]
    by_run = {(a.json()["run_id"], a.json()["verdict"]["commit"]) for a in answers}
    assert len(by_run) == 6, "each run one id, on both replicas"
    assert [a.status_code for a in answers].count(201) <= 6  # a 202 first answers 200 after
    assert _runs_of(store, repo) == sorted(run_id for run_id, _ in by_run)


def _claim(engine: Engine, repo: str, body: bytes, *, lease: timedelta) -> None:
    """A pending claim on ``body``'s upload, as a replica that died while judging it left it."""
    # the upload route's key: no query, the configuration the replicas read where they run
    config = config_digest(load_config(None, cwd=ROOT))
    key = claim_key(upload_key([body]), "", config)
    now = utcnow()
    row = {"upload_key": key, "repo": repo, "owner": "gone:1:0"}
    row |= {"claimed_at": now, "lease_until": now + lease}
    with session_scope(engine) as session:
        session.execute(sa.insert(table_of(UploadClaim)).values(**row))


def test_a_claim_whose_replica_died_is_taken_over_once_its_lease_lapsed(replicas, store) -> None:
    repo = "replicas/orphan"
    token = _token(store, repo)
    lapsed, live = (big_run(repo, 30 + i, 50).model_dump_json().encode() for i in range(2))
    _claim(store, repo, lapsed, lease=timedelta(seconds=-1))
    _claim(store, repo, live, lease=timedelta(minutes=5))
    taken = _post(replicas[1].url, lapsed, token)
    assert taken.status_code == 201, taken.text
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    waiting = httpx.post(
        f"{replicas[0].url}/api/v1/runs", content=live, headers=headers, timeout=60
    )
    assert waiting.status_code == 202 and waiting.headers["Retry-After"] == "5"
    assert _runs_of(store, repo) == [taken.json()["run_id"]]
