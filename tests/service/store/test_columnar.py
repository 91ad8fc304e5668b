"""A baseline run's kept columns (``service.store.columnar``) on SQLite and PostgreSQL.

A baseline read from kept columns must be the frame read from the rows, value for value and
dtype for dtype: the verdicts are judged on it.
"""

from __future__ import annotations

import pandas as pd
import sqlalchemy as sa
from both_backends import both_backends_engine  # noqa: F401  (the fixture ``engine``)
from factories import make_kernel, make_run
from store_cases import REPO, count, day, store

from service.store.db import session_scope
from service.store.history import BaselineQuery, nightly_history, read_baseline


def night(n: int):
    """Three kernels, one with no FLOPs and no bytes (NULL figures and labels)."""
    kernels = [
        make_kernel("a", time_s=1e-3 * (1 + n / 97)),
        make_kernel("b", time_s=2e-3, flops={"tensor_tf32": 3e9}, l2_bytes=1e9),
        make_kernel("c", time_s=5e-4, flops={}, dram_bytes=None),
    ]
    return make_run(kernels=kernels, commit=f"c{n:03d}", timestamp=day(n), kind="nightly")


def read(engine: sa.Engine, *, keep: bool, full_runs: int | None = None) -> pd.DataFrame:
    query = BaselineQuery(
        repo=REPO,
        device="H100-SXM5",
        roof_source="datasheet",
        base_branch="main",
        window=30,
        full_runs=full_runs,
        keep_columns=keep,
    )
    with session_scope(engine) as session:
        return read_baseline(session=session, query=query).frame


def rows(engine: sa.Engine) -> pd.DataFrame:
    """The same runs read from their rows (the digest's read keeps no columns)."""
    with session_scope(engine, readonly=True) as session:
        return nightly_history(session=session, repo=REPO, start=day(-1), end=day(99))


def test_a_baseline_read_from_kept_columns_is_the_one_read_from_rows(engine):
    for n in range(4):
        store(engine, night(n))
    first = read(engine, keep=True)
    assert count(engine, "run_columns") == 4
    again = read(engine, keep=True)
    from_rows = rows(engine)
    assert first["regime"].isna().sum() == 4  # kernel c, unplaced, in every run
    pd.testing.assert_frame_equal(again, first, check_exact=True)
    pd.testing.assert_frame_equal(again, from_rows, check_exact=True)
    assert list(again.dtypes) == list(from_rows.dtypes)


def test_older_runs_from_kept_columns_carry_only_what_the_gate_reads(engine):
    for n in range(4):
        store(engine, night(n))
    read(engine, keep=True)
    frame = read(engine, keep=False, full_runs=1)
    older = frame[frame["timestamp"] < day(3)]
    assert older["percent_of_roof"].notna().any()
    assert older["bytes_dram"].isna().all() and older["regime"].isna().all()
    assert frame[frame["timestamp"] == day(3)]["bytes_dram"].notna().any()


def test_a_reader_keeps_no_columns_and_a_deleted_run_takes_its_own(engine):
    ids = [store(engine, night(n)) for n in range(3)]
    read(engine, keep=False)
    assert count(engine, "run_columns") == 0
    read(engine, keep=True)
    with engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM runs WHERE id = :id"), {"id": ids[0]})
    assert count(engine, "run_columns") == 2
    assert sorted(set(read(engine, keep=False)["commit"])) == ["c001", "c002"]


def test_a_kept_row_whose_parts_disagree_is_read_from_the_rows(engine):
    for n in range(2):
        store(engine, night(n))
    read(engine, keep=True)
    with engine.begin() as conn:
        conn.execute(sa.text("""UPDATE run_columns SET labels = '{"regime": [], "binding": []}'"""))
    pd.testing.assert_frame_equal(read(engine, keep=False), rows(engine), check_exact=True)
