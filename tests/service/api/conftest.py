"""Fixtures of the HTTP service tests: an app on a real SQLite file or PostgreSQL."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from svc_helpers import Service

# github_server.py lives one level up; running this folder alone must find it too.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from github_server import FakeGitHub, github_server_fixture  # noqa: F401

from service.api.app import create_app
from service.config import RoofguardConfig
from service.settings import Settings
from service.store.db import make_engine, migrate


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
