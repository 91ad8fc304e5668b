"""The work counters of chosen measurements: by whole runs and by (run, kernel) key, both backends.

``pair_work`` (the charts' rows) must give, row by row, what ``run_work`` (the device change's
whole runs) gives: the stored counters where the measurement exists, NaN where it does not,
the same values for a pair wanted twice, on SQLite (row-value ``IN`` lists, in batches) and on
PostgreSQL (two arrays joined on the unique index).
"""

from __future__ import annotations

import numpy as np
import pytest
import sqlalchemy as sa
from both_backends import both_backends_engine  # noqa: F401  (the fixture ``engine``)
from factories import make_kernel, make_run
from store_cases import day, store

import service.store.workread as workread
from service.store.db import session_scope
from service.store.workread import WORK_COLUMNS, pair_work, run_work


def _fill(engine: sa.Engine) -> tuple[list[int], dict[str, int]]:
    """Five nights of three kernels, each kernel's bytes and FLOPs its own, night by night."""
    runs = []
    for n in range(5):
        kernels = [
            make_kernel(name, dram_bytes=1e9 * (i + 1) + n, flops={"fp16": 1e9 * (n + 1)})
            for i, name in enumerate(("a", "b", "c"))
        ]
        runs.append(store(engine, make_run(kernels=kernels, commit=f"c{n}", timestamp=day(n))))
    with engine.connect() as conn:
        ids = {k: v for k, v in conn.execute(sa.text("SELECT key, id FROM kernels"))}
    return runs, {str(k): int(v) for k, v in ids.items()}


def _wanted(runs: list[int], kernels: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Rows spread over the runs, one pair twice and one pair with no measurement."""
    pairs = [(runs[4], "a"), (runs[0], "c"), (runs[2], "b"), (runs[4], "a"), (runs[1], "b")]
    run_ids = [r for r, _ in pairs] + [runs[3]]
    kernel_ids = [kernels[k] for _, k in pairs] + [max(kernels.values()) + 1]
    return np.array(run_ids, dtype=np.int32), np.array(kernel_ids, dtype=np.int32)


def test_pairs_read_by_key_are_the_rows_read_by_whole_runs(engine):
    runs, kernels = _fill(engine)
    run_ids, kernel_ids = _wanted(runs, kernels)
    with session_scope(engine, readonly=True) as session:
        by_key = pair_work(session, run_ids, kernel_ids)
        by_run = run_work(session, run_ids, kernel_ids)
    for column in WORK_COLUMNS:
        np.testing.assert_array_equal(by_key[column], by_run[column], err_msg=column)
    assert by_key["bytes_dram"][:5].tolist() == [1e9 + 4, 3e9, 2e9 + 2, 1e9 + 4, 2e9 + 1]
    assert by_key["total_flops"][0] == 5e9
    assert np.isnan(by_key["total_flops"][5])  # no such measurement


def test_pairs_past_one_query_are_read_in_batches(engine, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(workread, "PAIRS_PER_QUERY", 2)  # SQLite's lists; PostgreSQL sends one
    runs, kernels = _fill(engine)
    run_ids = np.repeat(np.array(runs, dtype=np.int32), 3)
    kernel_ids = np.tile(np.array(sorted(kernels.values()), dtype=np.int32), len(runs))
    with session_scope(engine, readonly=True) as session:
        work = pair_work(session, run_ids, kernel_ids)
    night = np.repeat(np.arange(5), 3)
    np.testing.assert_array_equal(work["total_flops"], 1e9 * (night + 1))
    assert not np.isnan(work["bytes_dram"]).any()


def test_no_pairs_read_nothing(engine):
    _fill(engine)
    empty = np.zeros(0, dtype=np.int32)
    with session_scope(engine, readonly=True) as session:
        work = pair_work(session, empty, empty)
    assert all(len(work[c]) == 0 for c in WORK_COLUMNS)
