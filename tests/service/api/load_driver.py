"""Concurrent upload clients and the exactly-once audit of the store, for the load test
(CI-sized, ``test_api_load.py``) and the full benchmark (``tests/bench/bench_service_load.py``).

Each client uploads its own run, then uploads it again (a retry after a lost answer);
``pairs`` runs are also uploaded by two clients at the same moment (an identical-content race).
Afterwards the store must hold every distinct run exactly once, with all its kernels, and
nothing else.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import httpx
import numpy as np
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from collectors.schema import DeviceInfo, KernelRecord, ProfilerInfo, RunKind, RunRecord
from service.store.tables import FindingRow, Kernel, Measurement, Repository, Run


def big_run(repo: str, index: int, kernels: int, *, steady: bool = False) -> RunRecord:
    """A nightly run of ``kernels`` kernels (distinct content per ``index``).

    Each kernel's time is drawn from a factor of 2 every night, and most move more bytes a
    second than an H100 can (above its roof). ``steady``: as on a GPU runner, each keeps its
    own time and noise (t(5), 0.5-5% a night, as ``bench_nightly_gate.py`` draws) and moves
    a tenth of the bytes (6-36% of the HBM roof).
    """
    rng = np.random.default_rng(index)
    times = _steady_times(rng, kernels) if steady else 1e-4 * (1 + rng.random(kernels))
    moved = 4e7 if steady else 4e8
    records = tuple(
        KernelRecord(
            name=f"kernel_{k:05d}<float, {k % 7}>",
            key=f"kernel_{k:05d}",
            duration_s=float(t),
            flops={"fp32": 2e8 * (1 + k % 5)},
            bytes={"dram": moved * (1 + k % 3)},
        )
        for k, t in enumerate(times)
    )
    return RunRecord(
        repo=repo,
        commit=f"{index:08x}",
        branch="main",
        kind=RunKind.NIGHTLY,
        timestamp=datetime(2026, 11, 1, tzinfo=UTC) + timedelta(hours=index),
        device=DeviceInfo(name="NVIDIA H100 80GB HBM3"),
        profiler=ProfilerInfo(tool="ncu"),
        kernels=records,
    )


def _steady_times(night: np.random.Generator, kernels: int) -> np.ndarray:
    """Each kernel's own time (the same every night) with this night's noise on it."""
    own = np.random.default_rng(29)
    base = 1e-4 * (1 + own.random(kernels))
    cv = np.exp(own.uniform(np.log(0.005), np.log(0.05), kernels))
    return np.asarray(base * np.abs(1 + cv * night.standard_t(5, kernels)))


@dataclass
class LoadResult:
    """What the clients saw."""

    latencies_s: list[float] = field(default_factory=list)
    answers: list[tuple[int, int, int, bool]] = field(default_factory=list)  # run, status, id
    errors: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    bytes_sent: int = 0
    accepted: int = 0  # 202 answers: the check went on, the client uploaded again after
    client_cpu_s: float = 0.0  # the clients' CPU seconds, from the start to the last answer

    def p(self, q: float) -> float:
        return float(np.percentile(self.latencies_s, q)) if self.latencies_s else float("nan")


def _client(
    base: str,
    plan: Sequence[tuple[int, bytes, str]],
    result: LoadResult,
    start: threading.Barrier,
    lock: threading.Lock,
    timeout: float,
    params: dict[str, str],
) -> None:
    with httpx.Client(base_url=base, timeout=timeout, params=params) as client:
        start.wait()
        for run_index, body, token in plan:
            headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
            began = time.perf_counter()
            try:
                response = _until_answered(client, body, headers, result, lock)
                answer = response.json() if response.status_code < 300 else {}
            except httpx.HTTPError as exc:
                with lock:
                    result.errors.append(f"run {run_index}: {type(exc).__name__}")
                continue
            elapsed = time.perf_counter() - began
            with lock:
                result.latencies_s.append(elapsed)
                result.bytes_sent += len(body)
                result.answers.append(
                    (
                        run_index,
                        response.status_code,
                        int(answer.get("run_id", -1)),
                        bool(answer.get("created", False)),
                    )
                )
                if response.status_code >= 300:
                    result.errors.append(
                        f"run {run_index}: HTTP {response.status_code} {response.text[:200]}"
                    )


def _until_answered(
    client: httpx.Client,
    body: bytes,
    headers: dict[str, str],
    result: LoadResult,
    lock: threading.Lock,
) -> httpx.Response:
    """Upload ``body``; after a 202, again once ``Retry-After`` passed (``roofguard upload``)."""
    while True:
        response = client.post("/api/v1/runs", content=body, headers=headers)
        if response.status_code != 202:
            return response
        with lock:
            result.accepted += 1
        time.sleep(float(response.headers.get("Retry-After", "5")))


def run_load(
    base: str | Sequence[str],
    tokens: dict[str, str],
    *,
    clients: int,
    kernels: int,
    pairs: int,
    timeout: float = 600.0,
    steady: bool = False,
    on_start: Callable[[], object] = lambda: None,
    params: dict[str, str] | None = None,
) -> tuple[LoadResult, list[RunRecord]]:
    """``clients`` concurrent clients; returns what they saw and the distinct runs sent.

    ``steady``: runs of kernels as a GPU runner measures them (``big_run``). ``on_start`` is
    called as the clients start, after the runs are made (a benchmark's CPU counters).
    ``params``: the uploads' query (``{"answer": "brief"}``).

    Run ``i`` belongs to repository ``i mod len(tokens)`` and is sent with its token. Given
    several ``base`` URLs (replicas), client ``i`` talks to ``base[i mod len(base)]``, so the
    two clients of an identical-content race talk to two replicas.
    """
    bases = [base] if isinstance(base, str) else list(base)
    repos = list(tokens)
    runs = [big_run(repos[i % len(repos)], i, kernels, steady=steady) for i in range(clients)]
    sends = [(i, r.model_dump_json().encode(), tokens[str(r.repo)]) for i, r in enumerate(runs)]
    plans = [[sends[i], sends[i]] for i in range(clients)]
    for i in range(pairs):  # client 2i+1 starts with client 2i's run: both at the same moment
        plans[(i * 2 + 1) % clients].insert(0, sends[i * 2])
    result, lock = LoadResult(), threading.Lock()
    start = threading.Barrier(clients + 1)
    threads = [
        threading.Thread(
            target=_client,
            args=(bases[i % len(bases)], plan, result, start, lock, timeout, params or {}),
        )
        for i, plan in enumerate(plans)
    ]
    for thread in threads:
        thread.start()
    start.wait()
    began, began_cpu = time.perf_counter(), time.process_time()
    on_start()
    for thread in threads:
        thread.join()
    result.wall_s = time.perf_counter() - began
    result.client_cpu_s = time.process_time() - began_cpu
    return result, runs


def audit(engine: Engine, runs: Sequence[RunRecord], result: LoadResult) -> None:
    """Assert the store holds each run exactly once, completely, and nothing else.

    ``result.answers`` name runs by their position in ``runs``.
    """
    ids = audit_answers(result)
    for repo in sorted({str(run.repo) for run in runs}):
        mine = [i for i, run in enumerate(runs) if run.repo == repo]
        _audit_tables(engine, repo, sorted(ids[i] for i in mine), [runs[i] for i in mine])


def audit_answers(result: LoadResult) -> dict[int, int]:
    """Assert every answer was a success and each run got one id, created once; the ids."""
    assert not result.errors, result.errors[:5]
    by_run: dict[int, set[int]] = {}
    created: dict[int, int] = {}
    for run_index, status, run_id, was_created in result.answers:
        assert status in (200, 201), (run_index, status)
        by_run.setdefault(run_index, set()).add(run_id)
        created[run_index] = created.get(run_index, 0) + int(was_created)
    assert all(len(ids) == 1 for ids in by_run.values()), "a run got two ids"
    # One upload of each run stored it: 201, or a 202 whose retry answered 200.
    assert all(n <= 1 for n in created.values()), "a run was created twice"
    return {index: next(iter(v)) for index, v in by_run.items()}


def _count(conn: sa.Connection, table: sa.Table, *where: sa.ColumnElement[bool]) -> int:
    return int(
        conn.execute(sa.select(sa.func.count()).select_from(table).where(*where)).scalar_one()
    )


def _audit_tables(engine: Engine, repo: str, ids: list[int], runs: Sequence[RunRecord]) -> None:
    r, m, k = Run.__table__, Measurement.__table__, Kernel.__table__
    repos, f = Repository.__table__, FindingRow.__table__
    kernels = sum(len(run.kernels) for run in runs)
    keys = {kernel.key for run in runs for kernel in run.kernels}
    with engine.connect() as conn:
        rid = conn.execute(sa.select(repos.c.id).where(repos.c.name == repo)).scalar_one()
        stored = sorted(conn.execute(sa.select(r.c.id).where(r.c.repo_id == rid)).scalars())
        assert stored == ids, f"runs stored {len(stored)}, expected {len(ids)}"
        assert _count(conn, m, m.c.run_id.in_(ids)) == kernels
        assert _count(conn, k, k.c.repo_id == rid) == len(keys)
        orphans = _count(conn, m, m.c.run_id.not_in(sa.select(r.c.id)))
        stray = _count(conn, f, f.c.run_id.not_in(sa.select(r.c.id)))
        assert orphans == 0 and stray == 0
