"""Migration 0015: a run keeps the baseline its verdict was judged against, on both backends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import sqlalchemy as sa
from both_backends import both_backends_engine
from factories import make_kernel, make_run

from collectors.schema import RunRecord
from service.config import RoofguardConfig
from service.pipeline.basechoice import NONE_NAMED, AskedBase
from service.pipeline.check import CheckOutcome, check_run
from service.store.baselines import MergeBase
from service.store.db import alembic_config, session_scope
from service.store.judgedbase import JudgedBase, judged_base

__all__ = ["both_backends_engine"]

NIGHT = datetime(2026, 11, 1, 2, tzinfo=UTC)
#: The merge base's commit time as ``git log --format=%cI`` gives it: not in UTC.
MERGED_OFF = datetime(2026, 11, 4, 9, 30, tzinfo=timezone(timedelta(hours=2)))


def _run(commit: str, day: int, kind: str = "nightly") -> RunRecord:
    pr = {"pull_request": 7, "branch": "feature"} if kind == "pr" else {}
    return make_run(
        repo="acme/based",
        commit=commit,
        kind=kind,
        timestamp=NIGHT + timedelta(days=day),
        kernels=[make_kernel("gemm", time_s=1e-3 * (1 + 0.002 * (day % 3)))],
        **pr,
    )


def _check(engine: sa.Engine, run: RunRecord, base: AskedBase = NONE_NAMED) -> CheckOutcome:
    with session_scope(engine) as session:
        return check_run(session=session, run=run, config=RoofguardConfig(), base=base)


def _kept(engine: sa.Engine, run_id: int) -> JudgedBase | None:
    with session_scope(engine, readonly=True) as session:
        return judged_base(session=session, run_id=run_id)


def test_a_check_keeps_its_base_branch_and_merge_base(engine) -> None:
    night = _check(engine, _run("n1", 0)).run_id
    assert _kept(engine, night) == JudgedBase("main")
    asked = AskedBase("release/2.0", MergeBase("abc1234", MERGED_OFF))
    pr = _check(engine, _run("p1", 5, "pr"), asked).run_id
    assert _kept(engine, pr) == JudgedBase("release/2.0", MergeBase("abc1234", MERGED_OFF))
    again = _check(engine, _run("p1", 5, "pr"))  # named nothing: the stored verdict's
    assert again.run_id == pr and not again.created
    assert _kept(engine, pr) == JudgedBase("release/2.0", MergeBase("abc1234", MERGED_OFF))


def test_runs_judged_before_the_migration_keep_no_base_and_read_as_before(engine) -> None:
    from alembic import command

    for day in range(4):
        _check(engine, _run(f"n{day}", day))
    pr = _run("p1", 5, "pr")
    first = _check(engine, pr, AskedBase(merge_base=MergeBase("n1")))
    with engine.begin() as conn:
        command.downgrade(alembic_config(conn), "0014")
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "head")
    assert _kept(engine, first.run_id) is None  # not known: the configured branch, as then
    again = _check(engine, pr)
    assert again.run_id == first.run_id and again.verdict.baseline.commits == ("n0", "n3")
    kept = _check(engine, _run("p2", 6, "pr"), AskedBase(merge_base=MergeBase("n1")))
    assert _kept(engine, kept.run_id) == JudgedBase("main", MergeBase("n1"))
