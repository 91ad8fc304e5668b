"""The floor of an upload service on this box, for ``bench_service_load.py --floor``.

A bare server with none of roofguard: each ``POST /api/v1/runs`` parses the JSON body and
stores it once in PostgreSQL, a run row unique by the body's sha256 (``ON CONFLICT DO
NOTHING``, so two replicas racing on one body store it once) and one row per kernel by
COPY, in one transaction; it answers ``{"run_id": ..., "created": ...}``. No validation,
roof, placement, rules, findings or verdict. What 50 clients reach against it on the same
cores and database is the most any upload service that stores what it is sent can reach.

    python tests/bench/floor_server.py --port 8123 --db postgresql+psycopg://...
"""

from __future__ import annotations

import argparse
import hashlib
import json
from typing import Any

import sqlalchemy as sa
import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

TABLES = (
    "CREATE TABLE IF NOT EXISTS floor_runs "
    "(id serial PRIMARY KEY, digest bytea UNIQUE NOT NULL, repo text NOT NULL)",
    "CREATE TABLE IF NOT EXISTS floor_measurements "
    "(run_id integer NOT NULL REFERENCES floor_runs (id), key text NOT NULL, "
    "duration_s double precision NOT NULL)",
)
INSERT_RUN = (
    "INSERT INTO floor_runs (digest, repo) VALUES (%s, %s) "
    "ON CONFLICT (digest) DO NOTHING RETURNING id"
)
COPY_KERNELS = "COPY floor_measurements (run_id, key, duration_s) FROM STDIN"


def create_tables(engine: sa.Engine) -> None:
    """The floor's two tables (kept beside roofguard's in the benchmark's scratch database)."""
    with engine.begin() as conn:
        for statement in TABLES:
            conn.execute(sa.text(statement))


def store_once(engine: sa.Engine, body: bytes) -> tuple[int, bool]:
    """Store the run in ``body`` unless a run of the same bytes is stored; its id, created."""
    record: dict[str, Any] = json.loads(body)
    digest = hashlib.sha256(body).digest()
    connection = engine.raw_connection()
    try:
        with connection.driver_connection.transaction():  # type: ignore[union-attr]
            cursor = connection.driver_connection.cursor()  # type: ignore[union-attr]
            inserted = cursor.execute(INSERT_RUN, (digest, record["repo"])).fetchone()
            if inserted is None:  # stored before, or by a racing request that committed
                found = cursor.execute("SELECT id FROM floor_runs WHERE digest = %s", (digest,))
                return int(found.fetchone()[0]), False
            with cursor.copy(COPY_KERNELS) as copy:
                for kernel in record["kernels"]:
                    copy.write_row((inserted[0], kernel["key"], kernel["duration_s"]))
            return int(inserted[0]), True
    finally:
        connection.close()


def audit_floor(engine: sa.Engine, ids: dict[int, int], kernels: int) -> None:
    """Assert the floor stored each run of ``ids`` (run index: id) once, with its kernels."""
    with engine.connect() as conn:
        stored = sorted(conn.execute(sa.text("SELECT id FROM floor_runs")).scalars())
        rows = conn.execute(sa.text("SELECT count(*) FROM floor_measurements")).scalar_one()
    assert stored == sorted(ids.values()), f"runs stored {len(stored)}, expected {len(ids)}"
    assert rows == kernels * len(ids), f"kernels stored {rows}, expected {kernels * len(ids)}"


def application(db_url: str) -> Starlette:
    """The floor server on the database at ``db_url``."""
    engine = sa.create_engine(db_url, pool_size=20, max_overflow=0)

    async def upload(request: Request) -> Response:
        run_id, created = await run_in_threadpool(store_once, engine, await request.body())
        answer = {"run_id": run_id, "created": created}
        return JSONResponse(answer, status_code=201 if created else 200)

    async def ready(_: Request) -> Response:
        return JSONResponse({"ready": True})

    routes = [Route("/api/v1/runs", upload, methods=["POST"]), Route("/readyz", ready)]
    return Starlette(routes=routes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--db", required=True)
    args = parser.parse_args()
    uvicorn.run(application(args.db), host="127.0.0.1", port=args.port, access_log=False)


if __name__ == "__main__":
    main()
