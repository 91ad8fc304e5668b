"""Helpers of the HTTP service tests: the Service under test, bearer headers, live uvicorn."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import uvicorn
from factories import make_run
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from collectors.schema import KernelRecord, RunRecord
from service.settings import Settings
from service.store.db import session_scope
from service.store.tokens import Permission, create_token

#: The first night of the service tests' nightly runs.
NIGHT = datetime(2026, 11, 1, 3, 0, tzinfo=UTC)


def nightly_run(repo: str, night: int, kernels: list[KernelRecord]) -> RunRecord:
    """Night ``night``'s nightly run of ``repo`` (its own commit and timestamp)."""
    return make_run(
        repo=repo,
        commit=f"{night:07x}aa",
        timestamp=NIGHT + timedelta(days=night),
        kernels=kernels,
    )


def pr_run(repo: str, kernels: list[KernelRecord]) -> RunRecord:
    """Pull request 7's run of ``repo``, after nine nights."""
    return make_run(
        repo=repo,
        commit="badc0de",
        kind="pr",
        pull_request=7,
        branch="feature",
        timestamp=NIGHT + timedelta(days=9),
        kernels=kernels,
    )


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
