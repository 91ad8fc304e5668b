"""Large runs go in by COPY on PostgreSQL and by chunked executemany on SQLite (issue 29).

Both must store exactly the rows a small run's ingest stores, resolve known and new kernels
alike, and leave nothing behind when the ingest fails half-way.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest
import sqlalchemy as sa
from factories import make_kernel, make_run
from scratchdb import scratch_database
from store_cases import H100, count

import service.store.bulk as bulk
import service.store.ingest as ingest_module
from rules.placement import place_run
from rules.roofline import Placement
from service.store.batch_ingest import write_tuples
from service.store.coretables import REPOSITORIES
from service.store.db import open_store, session_scope
from service.store.ingest import ingest_run, measurement_row
from service.store.tables import Kernel, Measurement, table_of

N = 2_500  # above the COPY threshold and, with CHUNK lowered, several chunks


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def engine(request, tmp_path, monkeypatch):
    monkeypatch.setattr(bulk, "CHUNK", 1_000)
    if request.param == "sqlite":
        engine = open_store(f"sqlite:///{tmp_path / 'h.db'}")
        yield engine
        engine.dispose()
        return
    # A database of its own: the worker's is shared with modules xdist interleaves.
    with scratch_database(request.getfixturevalue("postgres_url"), "bulk") as url:
        engine = open_store(url)
        yield engine
        engine.dispose()


def big_run(night: int, kernels: range):
    made = [
        make_kernel(
            f"k{i}",
            time_s=1e-3 * (1 + i % 7) * (1 + night / 100),
            flops={"tensor_fp16": 2e9 + i} if i % 3 else {},
            l2_bytes=8e9 if i % 2 else None,
        )
        for i in kernels
    ]
    return make_run(kernels=made, commit=f"c{night}")


def stored(engine: sa.Engine, run_id: int) -> dict[str, dict]:
    """The stored measurement rows of a run by kernel key, without their ids."""
    m, k = table_of(Measurement), table_of(Kernel)
    stmt = sa.select(k.c.key, m).join(k, k.c.id == m.c.kernel_id).where(m.c.run_id == run_id)
    with engine.connect() as conn:
        rows = conn.execute(stmt).mappings().all()
    skip = {"key", "id", "run_id", "kernel_id"}
    return {r["key"]: {c: v for c, v in r.items() if c not in skip} for r in rows}


def differing(got: dict[str, dict], want: dict[str, dict]) -> list[str]:
    """Kernels whose stored row is not the expected one (a short list, not a 2,500-row diff)."""
    return sorted(key for key in got.keys() | want.keys() if got.get(key) != want.get(key))[:5]


def expected(run) -> dict[str, dict]:
    placements = place_run(run, H100)
    rows = {
        k.key: measurement_row(k, placements.get(k.key), run_id=0, kernel_id=0, roof_source="x")
        for k in run.kernels
    }
    return {
        key: {c: v for c, v in row.items() if c not in {"run_id", "kernel_id"}}
        | {"roof_source": "datasheet"}
        for key, row in rows.items()
    }


def ingest(engine: sa.Engine, run, placements=None) -> int:
    with session_scope(engine) as session:
        placements = place_run(run, H100) if placements is None else placements
        return ingest_run(session=session, run=run, placements=placements, roof=H100).run_id


def test_a_large_run_stores_every_row_a_small_one_would(engine, monkeypatch):
    copies: list[str] = []
    real_copy = bulk._copy
    monkeypatch.setattr(
        bulk, "_copy", lambda s, target, *a: copies.append(target) or real_copy(s, target, *a)
    )
    first = big_run(1, range(N))
    assert differing(stored(engine, ingest(engine, first)), expected(first)) == []
    second = big_run(2, range(100, N + 100))  # 2,400 known kernels, 100 new
    assert differing(stored(engine, ingest(engine, second)), expected(second)) == []
    assert count(engine, "kernels") == N + 100
    assert count(engine, "measurements") == 2 * N
    assert ingest(engine, second) == 2 and count(engine, "measurements") == 2 * N  # stored once
    postgres = engine.dialect.name == "postgresql"
    assert copies.count("measurements") == (2 if postgres else 0)  # COPY, not executemany
    assert len(copies) == (4 if postgres else 0)  # and each run's kernels by a scratch table


def test_sqlite_stores_the_bytes_sqlalchemy_would(tmp_path, monkeypatch):
    """The driver's executemany of bound values writes what SQLAlchemy's own executemany of
    the row dicts writes, JSON text and booleans included."""
    by_driver: list[str] = []
    real = bulk.driver_executemany
    monkeypatch.setattr(
        bulk, "driver_executemany", lambda s, t, *a: by_driver.append(t.name) or real(s, t, *a)
    )

    def raw_rows(name: str) -> list[tuple]:
        engine = open_store(f"sqlite:///{tmp_path / name}")
        ingest(engine, big_run(1, range(300)))
        with engine.connect() as conn:  # as stored: JSON as text, booleans as integers
            rows = conn.exec_driver_sql("SELECT * FROM measurements ORDER BY id").all()
        engine.dispose()
        return [tuple(row) for row in rows]

    fast = raw_rows("driver.db")
    assert by_driver == ["measurements"]

    def by_sqlalchemy(session, table, rows) -> None:
        session.execute(sa.insert(table), list(rows))

    monkeypatch.setattr(ingest_module, "insert_rows", by_sqlalchemy)
    assert raw_rows("sqlalchemy.db") == fast and len(fast) == 300
    assert by_driver == ["measurements"]


def test_a_database_error_while_writing_rows_is_sqlalchemys(engine):
    """COPY and SQLite's executemany go around SQLAlchemy; their errors must still be its own.

    As the driver's own (psycopg's, sqlite3's), a full disk read "unexpected
    OperationalError" and an upload's dropped connection answered 500, not the 503 clients
    retry on: the store and the service know SQLAlchemy's errors only.
    """
    run = big_run(1, range(3))
    run_id = ingest(engine, run)
    m = table_of(Measurement)
    with engine.connect() as conn:
        kernel_id = conn.execute(sa.select(m.c.kernel_id).limit(1)).scalar_one()
    row = measurement_row(run.kernels[0], None, run_id=run_id, kernel_id=kernel_id, roof_source="x")
    rows = [row | {"launches": None}] * 1_200  # NOT NULL: by COPY on PostgreSQL too
    with pytest.raises(sa.exc.IntegrityError), session_scope(engine) as session:
        bulk.insert_rows(session, m, rows)
    assert count(engine, "measurements") == 3


class FailingLate(Mapping[str, Placement]):
    """The run's placements, until the 2,000th kernel's: a crash deep into the rows."""

    def __init__(self, run) -> None:
        self._placements = place_run(run, H100)

    def __getitem__(self, key: str) -> Placement:
        return self._placements[key]

    def get(self, key, default=None):  # type: ignore[override]
        if key == "k2000":
            raise RuntimeError("placement of k2000 failed")
        return self._placements.get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._placements)

    def __len__(self) -> int:
        return len(self._placements)


def test_a_failure_deep_into_a_large_run_leaves_nothing_behind(engine):
    run = big_run(1, range(N))
    with pytest.raises(RuntimeError, match="k2000 failed"):
        ingest(engine, run, FailingLate(run))
    for table in ("repositories", "devices", "runs", "kernels", "measurements"):
        assert count(engine, table) == 0, table
    assert ingest(engine, run) > 0


def test_storing_a_huge_run_shows_progress_on_a_terminal_only(engine, monkeypatch, capsys):
    import service.progress as progress

    shown: list[str] = []
    monkeypatch.setattr(ingest_module, "_PROGRESS_FROM", 2_000)  # a million in real life
    monkeypatch.setattr(progress, "progress_enabled", lambda: bool(shown.append("asked")))
    ingest(engine, big_run(1, range(N)))
    assert shown == ["asked"] * 3, "a huge run: spinners hashing, storing its kernels; a bar"
    assert capsys.readouterr().err == "", "and draws none off a terminal (CI)"
    ingest(engine, big_run(2, range(1_000)))
    assert shown == ["asked"] * 3, "a small run does not"


def test_kernels_another_ingest_stored_meanwhile_are_skipped_not_a_failure(engine, monkeypatch):
    """The kernels' plain insert fails on the unique key; its savepoint and a join recover."""
    if engine.dialect.name != "postgresql":
        pytest.skip("the kernels go by a scratch table on PostgreSQL only")
    ingest(engine, big_run(1, range(N)))
    real_insert, calls = bulk._insert, []

    def as_if_raced(session, table, scratch, columns, key, where):
        calls.append(where)
        got = real_insert(session, table, scratch, columns, key, "")  # misses none: conflicts
        return dict(list(got.items())[: len(got) // 2])  # and half its ids are not seen

    monkeypatch.setattr(bulk, "_insert", as_if_raced)
    second = big_run(2, range(100, N + 100))  # 2,400 known kernels, 100 new
    assert differing(stored(engine, ingest(engine, second)), expected(second)) == []
    assert calls and "NOT EXISTS" in calls[0]
    assert count(engine, "kernels") == N + 100


def test_rows_go_by_binary_copy_where_every_column_has_a_binary_form():
    m = table_of(Measurement)
    assert all(bulk._binary_type(c.type) for c in m.c)
    assert bulk._binary_type(sa.DateTime()) is None  # such a table goes as text


@pytest.mark.parametrize("rows", [1, N], ids=["one row", "by COPY"])
def test_rows_that_leave_out_a_defaulted_column_are_refused(engine, rows):
    """COPY and executemany apply no default: ``created_at`` would be NULL, or fail on one side."""
    given = [{"name": f"acme/r{i}"} for i in range(rows)]
    refused = pytest.raises(ValueError, match="rows for repositories leave out created_at")
    with session_scope(engine) as session, refused:
        bulk.insert_rows(session, REPOSITORIES, given)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM repositories")).scalar_one() == 0


def test_tuples_that_leave_out_a_defaulted_column_are_refused(engine):
    refused = pytest.raises(ValueError, match="rows for repositories leave out created_at")
    with session_scope(engine) as session, refused:
        write_tuples(session, REPOSITORIES, ["name"], [("acme/r",)])
