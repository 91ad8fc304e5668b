"""Load benchmark of the HTTP service on loopback (not part of the test run).

50 concurrent clients each upload a 2,000-kernel run and then retry it, and ``--pairs`` runs
are uploaded by two clients at the same moment, to a real ``roofguard serve`` process on a
fresh PostgreSQL database. Afterwards the store must hold every run exactly once, complete,
and nothing else. Printed: throughput and latency percentiles, beside the reference: the
same check called in-process, one run at a time, without HTTP.

    ROOFGUARD_TEST_POSTGRES_URL=postgresql+psycopg://root@127.0.0.1:5432/test \\
        python tests/bench/bench_service_load.py --clients 50 --kernels 2000 --workers 2

Bounded: 2 or 3 requests per client, each given at most ``min(--timeout, --max-seconds)``
seconds. The scratch database is dropped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "service" / "api")]

import httpx  # noqa: E402
import sqlalchemy as sa  # noqa: E402
from load_driver import audit, big_run, run_load  # noqa: E402

from service.config import RoofguardConfig  # noqa: E402
from service.pipeline.check import check_run  # noqa: E402
from service.store.db import make_engine, migrate, session_scope  # noqa: E402
from service.store.tokens import Permission, create_token  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fresh_database(base: str) -> str:
    name = f"roofguard_bench_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return sa.engine.make_url(base).set(database=name).render_as_string(hide_password=False)


def reference_seconds(url: str, kernels: int, samples: int = 2) -> float:
    """Median seconds of one in-process check of a run of ``kernels`` kernels (no HTTP)."""
    engine = make_engine(url)
    times = []
    for i in range(samples):
        run = big_run(f"bench/reference-{i}", 10_000 + i, kernels)
        began = time.perf_counter()
        with session_scope(engine) as session:
            check_run(session=session, run=run, config=RoofguardConfig())
        times.append(time.perf_counter() - began)
    engine.dispose()
    return sorted(times)[len(times) // 2]


def start_server(url: str, workers: int) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "service",
            "serve",
            "--port",
            str(port),
            "--db",
            url,
            "--workers",
            str(workers),
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                return proc, base
        except httpx.TransportError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("roofguard serve did not become ready")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--kernels", type=int, default=2000)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--repos", type=int, default=50, help="repositories the runs spread over")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--max-seconds", type=float, default=3600.0)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    base_url = os.environ.get("ROOFGUARD_TEST_POSTGRES_URL")
    if not base_url:
        raise SystemExit("set ROOFGUARD_TEST_POSTGRES_URL")
    url = fresh_database(base_url)
    try:
        measure(args, url)
    finally:
        admin = sa.create_engine(base_url, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            name = sa.engine.make_url(url).database
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def measure(args: argparse.Namespace, url: str) -> None:
    """Reference, server, clients, audit and report on the database at ``url``."""
    engine = make_engine(url)
    migrate(engine)
    reference = reference_seconds(url, args.kernels)
    tokens = {}
    with session_scope(engine) as session:
        for r in range(args.repos):
            repo = f"bench/fleet-{r:02d}"
            tokens[repo] = create_token(
                session=session, repo=repo, permission=Permission.WRITE, name="bench"
            )[1]
    proc, base = start_server(url, args.workers)
    try:
        timeout = min(args.timeout, args.max_seconds)
        result, runs = run_load(
            base,
            tokens,
            clients=args.clients,
            kernels=args.kernels,
            pairs=args.pairs,
            timeout=timeout,
        )
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    audit(engine, runs, result)
    engine.dispose()
    report(args, result, reference)


def report(args: argparse.Namespace, result, reference: float) -> None:
    requests = len(result.answers)
    figures = {
        "clients": args.clients,
        "kernels_per_run": args.kernels,
        "workers": args.workers,
        "requests": requests,
        "distinct_runs": args.clients,
        "wall_s": round(result.wall_s, 1),
        "requests_per_s": round(requests / result.wall_s, 3),
        "kernels_ingested_per_s": round(args.clients * args.kernels / result.wall_s, 1),
        "latency_p50_s": round(result.p(50), 2),
        "latency_p95_s": round(result.p(95), 2),
        "latency_max_s": round(max(result.latencies_s), 2),
        "reference_in_process_check_s": round(reference, 2),
        "mb_uploaded": round(result.bytes_sent / 1e6, 1),
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
