"""Load benchmark of the HTTP service on loopback (not part of the test run).

50 concurrent clients each upload a 2,000-kernel run and then retry it, and ``--pairs`` runs
are uploaded by two clients at the same moment, to 1 and then 2 real ``roofguard serve``
processes (replicas, ``--replicas 1,2``) on one fresh PostgreSQL database each. Clients
spread over the replicas, and the two clients of a race talk to different ones; a 202 is
uploaded again after its ``Retry-After``, as ``roofguard upload`` does. Afterwards the store
must hold every run exactly once, complete, and nothing else, and the replicas together
must have judged each run once (their ``roofguard_upload_checks`` counters).

Printed per replica count: distinct runs stored per second, requests per second, latency
percentiles (until the verdict, 202s included), the CPU seconds the serve processes spent
per stored run, and beside them the reference: the same check called in-process, one run
at a time, without HTTP (wall and CPU seconds), in the same run on the same database.
The difference of the two CPU figures is the service's own cost per upload (HTTP, parsing,
claims, answer); 2 cores divided by the serve CPU per upload bounds the uploads per second.
Beside it, the CPU per stored run of PostgreSQL's processes, of the clients (this process)
and of the rest of the box (other jobs), which share the same 2 cores (``box_cpu``).

``--brief`` has the clients ask for brief answers (``answer=brief``: the run's id and the
verdict's conclusion, not the 1-2 MB verdict). ``--floor`` also runs the same clients
against the floor server (``floor_server.py``) at each replica count: a bare server that
parses each upload and stores it once in the same PostgreSQL, with none of roofguard, so its
uploads per second bound any service's here.

    ROOFGUARD_TEST_POSTGRES_URL=postgresql+psycopg://root@127.0.0.1:5432/test \\
        python tests/bench/bench_service_load.py --clients 50 --kernels 2000 --replicas 1,2

``--phases`` prints instead where one upload's CPU goes, in-process (no HTTP): parsing the
body, choosing the roof, placing, storing, reading the baseline, the rules (the gate's pass
and, within it, the levels kept for the next PR), explaining, storing the findings and the
answer (its markdown within it); for a nightly run of a new repository (the load test's
runs) and, with ``--phase-nights N``, for a nightly run and a PR run after N nights.
Every kernel's time is drawn from a factor of 2 each night, and most are above the H100's
HBM roof; with ``--steady`` (both modes) each keeps its own time and its own 0.5-5% noise,
under the roof, as on a GPU runner.

Bounded: 2 or 3 uploads per client, each given at most ``min(--timeout, --max-seconds)``
seconds. The scratch databases are dropped at the end.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# tests/ holds the run factories the service test helpers build their runs with.
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "service" / "api")]

import httpx  # noqa: E402
import sqlalchemy as sa  # noqa: E402
from box_cpu import CpuWindow, process_cpu_s  # noqa: E402
from floor_server import audit_floor, create_tables  # noqa: E402
from load_driver import LoadResult, audit, audit_answers, big_run, run_load  # noqa: E402
from replicas import Replica, serving  # noqa: E402

from collectors.schema import RunKind, RunRecord  # noqa: E402
from service.api import inflight, uploads  # noqa: E402
from service.config import RoofguardConfig  # noqa: E402
from service.pipeline.check import check_run  # noqa: E402
from service.pipeline.request import CheckRequest  # noqa: E402
from service.store.db import make_engine, migrate, session_scope  # noqa: E402
from service.store.tokens import Permission, create_token  # noqa: E402

CORES = 2  # the development box's; goal 2 is stated for it
FLOOR_SERVER = [sys.executable, str(Path(__file__).with_name("floor_server.py"))]


@contextmanager
def fresh_database(base: str) -> Iterator[str]:
    """A new PostgreSQL database next to ``base``, dropped afterwards."""
    name = f"roofguard_bench_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        yield sa.engine.make_url(base).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def reference(
    url: str, kernels: int, samples: int = 3, steady: bool = False
) -> tuple[float, float]:
    """Median wall and CPU seconds of one in-process check of ``kernels`` kernels (no HTTP)."""
    engine = make_engine(url)
    walls, cpus = [], []
    for i in range(samples):
        run = big_run(f"bench/reference-{i}", 10_000 + i, kernels, steady=steady)
        wall, cpu = time.perf_counter(), time.process_time()
        with session_scope(engine) as session:
            check_run(session=session, run=run, config=RoofguardConfig())
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    engine.dispose()
    return sorted(walls)[len(walls) // 2], sorted(cpus)[len(cpus) // 2]


def checks_judged(replicas: list[Replica]) -> int:
    """Upload checks the replicas judged together (``roofguard_upload_checks_total``)."""
    total = 0.0
    for replica in replicas:
        text = httpx.get(f"{replica.url}/metrics", timeout=30).text
        found = re.search(r"^roofguard_upload_checks_total (\S+)$", text, re.M)
        total += float(found[1]) if found else float("nan")
    return int(total)


#: The calls timed by ``--phases``, by module (each is looked up there when called).
_PHASES = {
    "service.pipeline.check": (
        "choose_for",
        "place_run",
        "ingest_run",
        "read_baseline",
        "evaluate",
        "baseline_kernels",
        "with_profile_changes",
        "save_levels",
        "save_findings",
    ),
    "rules.engine": ("gate_pass",),
    "rules.judging": ("cached_levels",),
    "service.render.markdown": ("render_verdict",),
    "service.api.inflight": ("answer_json",),
}


@contextmanager
def timed_phases() -> Iterator[dict[str, float]]:
    """Thread CPU seconds spent in each of ``_PHASES`` while inside (nested ones overlap)."""
    spent: dict[str, float] = defaultdict(float)
    saved = []
    for name, calls in _PHASES.items():
        module = importlib.import_module(name)
        for call in calls:
            saved.append((module, call, getattr(module, call)))
            setattr(module, call, _timed(getattr(module, call), call, spent))
    try:
        yield spent
    finally:
        for module, call, original in saved:
            setattr(module, call, original)


def _timed(
    func: Callable[..., object], name: str, spent: dict[str, float]
) -> Callable[..., object]:
    def timed(*args: object, **kwargs: object) -> object:
        began = time.thread_time()
        try:
            return func(*args, **kwargs)
        finally:
            spent[name] += time.thread_time() - began

    return timed


def upload_phases(url: str, runs: list[RunRecord]) -> dict[str, float]:
    """Mean thread CPU seconds by phase of uploading ``runs`` in-process (the first warms up)."""
    engine = make_engine(url)
    total: dict[str, float] = defaultdict(float)
    for index, run in enumerate(runs):
        body = run.model_dump_json().encode()
        with timed_phases() as spent:
            began = time.thread_time()
            record = uploads.parse_record(body)
            spent["parse_record"] += time.thread_time() - began
            with session_scope(engine) as session:
                outcome = CheckRequest(record, RoofguardConfig()).judge(session)
                inflight.answer_json(outcome)
            spent["upload"] += time.thread_time() - began
        for name, seconds in spent.items():
            total[name] += seconds / (len(runs) - 1) if index else 0.0
    engine.dispose()
    return {name: round(seconds, 3) for name, seconds in sorted(total.items())}


def phase_figures(
    url: str, kernels: int, nights: int, samples: int = 3, steady: bool = False
) -> dict[str, object]:
    """``upload_phases`` of a new repository's nightly runs, then after ``nights`` nights.

    ``steady``: each kernel keeps its own time and noise (``load_driver.big_run``).
    """
    migrate(make_engine(url))

    def run(repo: str, index: int) -> RunRecord:
        return big_run(repo, index, kernels, steady=steady)

    fresh = [run(f"bench/new-{i}", 500 + i) for i in range(samples + 1)]
    figures: dict[str, object] = {
        "kernels": kernels,
        "new_repository_nightly": upload_phases(url, fresh),
    }
    if nights:
        upload_phases(url, [run("bench/history", n) for n in range(nights)])
        later = [run("bench/history", nights + i) for i in range(samples + 1)]
        figures[f"nightly_after_{nights}_nights"] = upload_phases(url, later)
        prs = [_as_pr(run("bench/history", 600 + i), i, later[-1]) for i in range(samples + 1)]
        figures[f"pr_after_{nights + samples + 1}_nights"] = upload_phases(url, prs)
    return figures


def _as_pr(run: RunRecord, number: int, after: RunRecord) -> RunRecord:
    """``run`` as pull request ``number``'s, an hour after the nightly run ``after``."""
    return run.model_copy(
        update={
            "kind": RunKind.PR,
            "branch": "feature",
            "pull_request": number + 1,
            "timestamp": after.timestamp + timedelta(hours=1),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--kernels", type=int, default=2000)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--repos", type=int, default=50, help="repositories the runs spread over")
    parser.add_argument("--replicas", default="1,2", help="serve processes, one figure each")
    parser.add_argument("--workers", type=int, default=1, help="worker processes per replica")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--max-seconds", type=float, default=3600.0)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--phases", action="store_true", help="one upload's CPU by phase only")
    parser.add_argument("--phase-nights", type=int, default=0, help="history for --phases")
    parser.add_argument("--steady", action="store_true", help="kernels as a GPU runner has them")
    parser.add_argument("--floor", action="store_true", help="also the floor server, each count")
    parser.add_argument("--brief", action="store_true", help="uploads ask answer=brief")
    args = parser.parse_args()
    base_url = os.environ.get("ROOFGUARD_TEST_POSTGRES_URL")
    if not base_url:
        raise SystemExit("set ROOFGUARD_TEST_POSTGRES_URL")
    if args.phases:
        with fresh_database(base_url) as url:
            print(
                json.dumps(
                    phase_figures(url, args.kernels, args.phase_nights, steady=args.steady),
                    indent=2,
                )
            )
        return
    figures = []
    for count in (int(n) for n in args.replicas.split(",")):
        for floor in (False, True) if args.floor else (False,):
            with fresh_database(base_url) as url:
                figures.append(measure(args, url, count, floor=floor))
                print(json.dumps(figures[-1], indent=2), flush=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


def measure(
    args: argparse.Namespace, url: str, count: int, *, floor: bool = False
) -> dict[str, object]:
    """Reference, ``count`` replicas, clients, audit and figures on the database at ``url``.

    ``floor``: the replicas are the floor server, audited on its own tables, no reference.
    """
    engine = make_engine(url)
    migrate(engine)
    if floor:
        create_tables(engine)
    ref = None if floor else reference(url, args.kernels, steady=args.steady)
    tokens = write_tokens(engine, args.repos)
    window = CpuWindow()
    program = FLOOR_SERVER if floor else None
    with serving(url, count, workers=args.workers, program=program) as replicas:
        pids = [replica.process.pid for replica in replicas]
        cpu_before = sum(process_cpu_s(pid) for pid in pids)
        result, runs = run_load(
            [replica.url for replica in replicas],
            tokens,
            clients=args.clients,
            kernels=args.kernels,
            pairs=args.pairs,
            timeout=min(args.timeout, args.max_seconds),
            steady=args.steady,
            on_start=window.start,
            params={"answer": "brief"} if args.brief else None,
        )
        window.stop()
        serve_cpu = sum(process_cpu_s(pid) for pid in pids) - cpu_before
        checks = -1 if floor else checks_judged(replicas)
    if floor:
        audit_floor(engine, audit_answers(result), args.kernels)
    else:
        audit(engine, runs, result)  # raises unless every run is stored exactly once
    engine.dispose()
    figures = report(args, count, result, checks, serve_cpu, ref)
    return {
        "server": "floor" if floor else "roofguard",
        **figures,
        **cpu_shares(result, window, serve_cpu, args.clients),
    }


def write_tokens(engine: sa.Engine, repos: int) -> dict[str, str]:
    """A write token for each of ``repos`` repositories, by repository."""
    tokens = {}
    with session_scope(engine) as session:
        for r in range(repos):
            repo = f"bench/fleet-{r:02d}"
            tokens[repo] = create_token(
                session=session, repo=repo, permission=Permission.WRITE, name="bench"
            )[1]
    return tokens


def cpu_shares(
    result: LoadResult, window: CpuWindow, serve_cpu: float, runs: int
) -> dict[str, float]:
    """CPU seconds per stored run of the servers, PostgreSQL, the clients and the rest."""
    known = serve_cpu + window.postgres_s + result.client_cpu_s
    return {
        "postgres_cpu_s_per_upload": round(window.postgres_s / runs, 3),
        "client_cpu_s_per_upload": round(result.client_cpu_s / runs, 3),
        "other_cpu_s_per_upload": round((window.box_s - known) / runs, 3),
        "box_busy_fraction": round(window.box_s / (result.wall_s * CORES), 3),
        "cpu_bound_uploads_per_s_with_database_and_clients": round(CORES * runs / known, 2),
    }


def report(
    args: argparse.Namespace,
    count: int,
    result: LoadResult,
    checks: int,
    serve_cpu: float,
    ref: tuple[float, float] | None,
) -> dict[str, object]:
    runs = args.clients
    per_upload = serve_cpu / runs
    figures: dict[str, object] = {
        "replicas": count,
        "workers_per_replica": args.workers,
        "clients": runs,
        "kernels_per_run": args.kernels,
        "steady_kernels": args.steady,
        "brief_answers": args.brief,
        "requests": len(result.answers),
        "answers_202": result.accepted,
        "runs_stored_once": runs,  # the audit passed: each distinct run stored exactly once
        "checks_judged": checks,
        "wall_s": round(result.wall_s, 1),
        "uploads_per_s": round(runs / result.wall_s, 3),
        "requests_per_s": round(len(result.answers) / result.wall_s, 3),
        "latency_p50_s": round(result.p(50), 2),
        "latency_p95_s": round(result.p(95), 2),
        "latency_max_s": round(max(result.latencies_s), 2),
        "serve_cpu_s_per_upload": round(per_upload, 3),
        "cpu_bound_uploads_per_s_on_2_cores": round(CORES / per_upload, 2),
        "mb_uploaded": round(result.bytes_sent / 1e6, 1),
    }
    if ref is None:  # the floor server: no check to compare with
        return figures
    return {
        **figures,
        "reference_in_process_check_s": round(ref[0], 3),
        "reference_in_process_check_cpu_s": round(ref[1], 3),
        "service_overhead_cpu_s_per_upload": round(per_upload - ref[1], 3),
    }


if __name__ == "__main__":
    main()
