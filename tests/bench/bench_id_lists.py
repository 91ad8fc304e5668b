"""Long id lists on PostgreSQL: ``IN`` with a parameter each against one array (``one_of``).

The baseline read looks up the names of every kernel of a run by id (2,000 ids for a
2,000-kernel run) and, for a PR judged on some kernels, their ids by key hash. psycopg
converts a query's placeholders in Python and caches only short queries, so an ``IN`` of
thousands of parameters is converted on every call; ``service.store.fastread.one_of`` sends
one array instead. Both statements run on the same table in the same process, alternated,
and must return the same rows; the figure is CPU time (the box's load moves wall time).

Usage::

    python tests/bench/bench_id_lists.py [--sizes 2000,20000] [--repeat 20]
        [--postgres-url URL]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]
from scratchdb import scratch_database  # noqa: E402

from service.store.coretables import KERNELS, REPOSITORIES  # noqa: E402
from service.store.db import open_store  # noqa: E402
from service.store.fastread import one_of, raw_rows  # noqa: E402
from service.store.ids import key_hash  # noqa: E402


def _fill(conn: sa.Connection, count: int) -> None:
    conn.execute(sa.insert(REPOSITORIES), [{"id": 1, "name": "bench/ids"}])
    rows = [
        {"id": i, "repo_id": 1, "key": f"k{i}", "key_hash": key_hash(f"k{i}"), "name": f"k{i}"}
        for i in range(1, count + 1)
    ]
    conn.execute(sa.insert(KERNELS), rows)


def _cpu_ms(work: Callable[[], object], repeat: int) -> float:
    began = time.process_time()
    for _ in range(repeat):
        work()
    return (time.process_time() - began) / repeat * 1000


def _ways(conn: sa.Connection, column: sa.Column[Any], values: list[Any]) -> dict[str, Any]:
    """The two statements of the same rows: ``IN`` with a parameter each, and ``one_of``."""
    select = sa.select(KERNELS.c.id, KERNELS.c.name)
    return {
        "IN": select.where(column.in_(values)),
        "one_of": select.where(one_of(conn, column, values)),
    }


def _compare(
    conn: sa.Connection, column: sa.Column[Any], values: list[Any], repeat: int
) -> dict[str, float]:
    """CPU milliseconds a query of each way, alternated (the load moves both alike)."""
    ways = _ways(conn, column, values)
    assert sorted(raw_rows(conn, ways["IN"])) == sorted(raw_rows(conn, ways["one_of"]))
    spent = dict.fromkeys(ways, 0.0)
    for _ in range(2):
        for way, stmt in ways.items():
            spent[way] += _cpu_ms(lambda stmt=stmt: raw_rows(conn, stmt), repeat) / 2
    return spent


def measure(url: str, count: int, repeat: int) -> dict[str, object]:
    """CPU milliseconds a query of each way, for ``count`` ids and ``count`` key hashes."""
    engine = open_store(url)
    figures: dict[str, object] = {"values": count}
    with engine.begin() as conn:
        _fill(conn, count)
        lists = {
            "ids": (KERNELS.c.id, list(range(1, count + 1))),
            "hashes": (KERNELS.c.key_hash, [key_hash(f"k{i}") for i in range(1, count + 1)]),
        }
        for name, (column, values) in lists.items():
            spent = _compare(conn, column, values, repeat)
            figures.update({f"{name} {way} (ms)": round(ms, 2) for way, ms in spent.items()})
    engine.dispose()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,20000")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--postgres-url", default=os.environ.get("ROOFGUARD_TEST_POSTGRES_URL"))
    args = parser.parse_args()
    if not args.postgres_url:
        raise SystemExit("give --postgres-url or set ROOFGUARD_TEST_POSTGRES_URL")
    for size in (int(s) for s in args.sizes.split(",")):
        with scratch_database(args.postgres_url, "ids") as url:
            print(measure(url, size, args.repeat), flush=True)
    print("load average (1/5/15 min):", os.getloadavg())


if __name__ == "__main__":
    main()
