"""Fixtures of the HTTP service tests: an app on a real SQLite file or PostgreSQL, tokens, a
live uvicorn server on loopback. Import the fixtures by name into a test module."""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from collectors.schema import RunRecord
from service.api.app import create_app
from service.config import RoofguardConfig
from service.settings import Settings
from service.store.db import make_engine, migrate, session_scope
from service.tokens import Permission, create_token


@dataclass
class Service:
    """An application, its client and its store."""

    app: FastAPI
    client: TestClient
    engine: Engine
    settings: Settings

    def token(self, repo: str, *, write: bool = True, name: str = "ci") -> str:
        permission = Permission.WRITE if write else Permission.READ
        with session_scope(self.engine) as session:
            return create_token(session=session, repo=repo, permission=permission, name=name)[1]

    def upload(self, run: RunRecord, token: str) -> Any:
        body = run.model_dump_json()
        return self.client.post(
            "/api/v1/runs",
            content=body,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'service.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def repo() -> str:
    """A repository name of this test alone (tests share the PostgreSQL database)."""
    return f"acme/k-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def make_service(db_url: str) -> Iterator[Callable[..., Service]]:
    made: list[tuple[TestClient, Engine]] = []

    def make(config: RoofguardConfig | None = None, **settings: Any) -> Service:
        values = {"database_url": db_url, "webhook_secret": "whsec-test-0123456789", **settings}
        conf = Settings(**values)
        engine = make_engine(db_url)
        migrate(engine)
        app = create_app(conf, config or RoofguardConfig(), engine=engine)
        client = TestClient(app, base_url="http://testserver")
        client.__enter__()
        made.append((client, engine))
        return Service(app, client, engine, conf)

    yield make
    for client, engine in made:
        client.__exit__(None, None, None)
        engine.dispose()


@pytest.fixture
def service(make_service: Callable[..., Service]) -> Service:
    return make_service()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LiveServer:
    """uvicorn serving an app on a loopback port, in a thread."""

    url: str
    server: uvicorn.Server
    thread: threading.Thread

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def start_live(app: FastAPI, **config: Any) -> LiveServer:
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, **config)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    return LiveServer(f"http://127.0.0.1:{port}", server, thread)
