"""A service started before ``roofguard db upgrade``: every store route is a 503 that says so.

A store never upgraded, or one migrations behind this roofguard, answered a plain-text 500 (a
missing table or column in the log) on the API and on the dashboard, while ``/readyz`` named
the command to run.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from factories import make_kernel
from fastapi.testclient import TestClient
from markupsafe import escape
from scratchdb import scratch_database
from svc_helpers import auth, nightly_run

from service.api.app import create_app
from service.config import RoofguardConfig
from service.settings import Settings
from service.store.db import alembic_config, head_revision, make_engine, migrate, session_scope
from service.store.tokens import Permission, create_token

UPGRADE = "run `roofguard db upgrade`"
BROWSER = {"Accept": "text/html,application/xhtml+xml"}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def empty_url(request: pytest.FixtureRequest, tmp_path) -> Iterator[str]:
    """A database no ``db upgrade`` has run on."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.db'}"
        return
    with scratch_database(request.getfixturevalue("postgres_url"), "notready") as url:
        yield url


def _client(url: str) -> TestClient:
    return TestClient(create_app(Settings(database_url=url), RoofguardConfig()))


def _refusals(client: TestClient, token: str) -> list[tuple[str, httpx.Response]]:
    """The answers of the API and of the dashboard that need the store, by what was asked."""
    run = nightly_run("a/b", 0, [make_kernel("gemv")]).model_dump(mode="json")
    return [
        ("GET runs", client.get("/api/v1/runs", params={"repo": "a/b"}, headers=auth(token))),
        ("POST runs", client.post("/api/v1/runs", json=run, headers=auth(token))),
        ("GET devices", client.get("/api/v1/devices", params={"repo": "a/b"}, headers=auth(token))),
        ("GET / (API client)", client.get("/")),
    ]


def _assert_refused(client: TestClient, token: str, why: str) -> None:
    for what, answer in _refusals(client, token):
        assert answer.status_code == 503, (what, answer.status_code, answer.text)
        assert answer.headers["retry-after"] == "5", what
        assert answer.json() == {"detail": why}, what
    for path in ("/", "/runs/1", "/kernels?repo=a/b&key=gemv", "/digest"):
        page = client.get(path, headers=BROWSER)
        assert page.status_code == 503, (path, page.text)
        assert page.headers["content-type"].startswith("text/html"), path
        assert str(escape(why)) in page.text, (path, page.text)
    ready = client.get("/readyz")
    assert ready.status_code == 503 and ready.json()["detail"] == why


def test_a_store_never_upgraded_is_a_503_naming_db_upgrade(empty_url: str) -> None:
    """Was 500 ``Internal Server Error`` (UndefinedTable: relation "api_tokens")."""
    with _client(empty_url) as client:
        _assert_refused(client, "rgt_any", f"history store is not initialised; {UPGRADE}")
        assert client.get("/healthz").status_code == 200


def test_a_store_migrations_behind_is_a_503_until_upgraded(empty_url: str) -> None:
    """At the migration before this roofguard's: refused as ``/readyz`` and ``db current`` do.

    Once ``db upgrade`` has run, the same process serves: no restart is needed.
    """
    engine = make_engine(empty_url)
    migrate(engine)
    with session_scope(engine) as session:
        token = create_token(session=session, repo="a/b", permission=Permission.WRITE, name="ci")[1]

    from alembic import command

    with engine.begin() as conn:
        command.downgrade(alembic_config(conn), "-1")
    behind = f"{int(head_revision()) - 1:04d}"
    why = f"history store is at migration {behind}, this roofguard needs {head_revision()}; "
    with _client(empty_url) as client:
        _assert_refused(client, token, why + UPGRADE)
        migrate(engine)
        answer = client.get("/api/v1/runs", params={"repo": "a/b"}, headers=auth(token))
        assert answer.status_code == 200, answer.text
        assert client.get("/readyz").status_code == 200
    engine.dispose()
