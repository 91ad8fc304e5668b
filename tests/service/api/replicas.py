"""Real ``roofguard serve`` processes on loopback ports, for the replica test
(``test_api_replicas.py``) and the load benchmark (``tests/bench/bench_service_load.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from svc_helpers import free_port

ROOT = Path(__file__).resolve().parents[3]
READY_S = 90.0


@dataclass
class Replica:
    """One ``roofguard serve`` process: its URL, the process and where it logs."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@contextmanager
def serving(
    db_url: str,
    count: int,
    *,
    workers: int = 1,
    env: Mapping[str, str] | None = None,
    program: Sequence[str] | None = None,
) -> Iterator[list[Replica]]:
    """``count`` replicas of ``roofguard serve`` on one store, each on a free port.

    ``program``: another server to start instead, given ``--port`` and ``--db`` (the load
    benchmark's floor server).
    """
    serve = [sys.executable, "-m", "service", "serve", "--workers", str(workers)]
    with tempfile.TemporaryDirectory(prefix="roofguard-replicas-") as tmp, ExitStack() as stack:
        replicas = []
        for index in range(count):
            log = Path(tmp) / f"serve-{index}.log"
            replica = _start([*(program or serve)], db_url, log, env or {})
            stack.callback(_end, replica)
            replicas.append(replica)
        for replica in replicas:
            _wait_ready(replica)
        yield replicas


def _start(command: list[str], db_url: str, log: Path, env: Mapping[str, str]) -> Replica:
    port = free_port()
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*command, "--port", str(port), "--db", db_url],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        )
    return Replica(f"http://127.0.0.1:{port}", process, log)


def _wait_ready(replica: Replica) -> None:
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        if replica.process.poll() is not None:
            break
        try:
            if httpx.get(f"{replica.url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.3)
    raise RuntimeError(f"roofguard serve at {replica.url} did not start:\n{replica.log_tail()}")


def _end(replica: Replica) -> None:
    replica.process.terminate()
    try:
        replica.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        replica.process.kill()
        replica.process.wait(timeout=10)
