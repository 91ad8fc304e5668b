"""``roofguard serve`` made to quit at once mid-upload answers 503, and stores a run whole or not.

A second Ctrl-C makes uvicorn cancel the requests still running; it answered such an upload
500, which a client reads as a crash and does not retry. The upload is now told to come
back (503 with ``Retry-After``), and the store holds the run whole or not at all: the
ingest is one transaction. With a real ``serve`` process and a real upload.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import sqlalchemy as sa
from factories import make_kernel, make_run
from svc_helpers import auth, free_port

from service.store.coretables import MEASUREMENTS, RUNS, UPLOAD_CLAIMS
from service.store.db import make_engine, migrate, session_scope
from service.store.tokens import Permission, create_token

REPO_ROOT = Path(__file__).resolve().parents[3]
#: Kernels of the upload: its check takes seconds, long enough to be cut short.
KERNELS = 8000


def _store(path: Path) -> tuple[str, str]:
    url = f"sqlite:///{path}"
    engine = make_engine(url)
    migrate(engine)
    with session_scope(engine) as session:
        token = create_token(session=session, repo="acme/k", permission=Permission.WRITE, name="ci")
    engine.dispose()
    return url, token[1]


def _serve(url: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "service", "serve", "--port", str(port), "--db", url]
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, cwd=REPO_ROOT, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return proc
        except httpx.TransportError:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)


def _count(engine: sa.Engine, table: sa.Table) -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())


def _wait_for_claim(engine: sa.Engine, sent: threading.Thread) -> None:
    """Until the upload's check has begun: it claims the upload first (``store.claims``)."""
    deadline = time.monotonic() + 60
    while not _count(engine, UPLOAD_CLAIMS):
        assert sent.is_alive() and time.monotonic() < deadline, "the check never began"
        time.sleep(0.05)


def test_a_forced_shutdown_mid_upload_answers_503_and_stores_the_run_whole_or_not(
    tmp_path,
) -> None:
    url, token = _store(tmp_path / "history.db")
    port = free_port()
    proc = _serve(url, port, tmp_path / "serve.log")
    kernels = [make_kernel(f"k{i}", time_s=1e-3 + i * 1e-9) for i in range(KERNELS)]
    body = make_run(repo="acme/k", kernels=kernels).model_dump_json()
    answers: list[httpx.Response] = []
    headers = {**auth(token), "Content-Type": "application/json"}
    target = f"http://127.0.0.1:{port}/api/v1/runs"
    sent = threading.Thread(
        target=lambda: answers.append(httpx.post(target, content=body, headers=headers, timeout=60))
    )
    engine = make_engine(url)
    try:
        sent.start()
        _wait_for_claim(engine, sent)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)  # the second: quit now
        sent.join(60)
    finally:
        proc.kill()  # the check's thread may still be writing: its transaction ends unfinished
        proc.wait(30)
    (answer,) = answers
    log = (tmp_path / "serve.log").read_text()
    assert answer.status_code == 503, (answer.text, log[-3000:])
    assert answer.headers["Retry-After"] == "5"
    assert answer.json() == {"detail": "the service is shutting down; send the request again"}
    assert "POST /api/v1/runs cut short by a forced shutdown: answered 503" in log
    stored = (_count(engine, RUNS), _count(engine, MEASUREMENTS))
    engine.dispose()
    assert stored in ((0, 0), (1, KERNELS)), "a run is stored whole or not at all"
