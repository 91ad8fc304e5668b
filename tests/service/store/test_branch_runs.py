"""Which branches hold a repository's nightly and local runs on a card, for the branch note.

A check that finds no baseline names the branch it searched and those that hold runs
(``service.pipeline.branchnote``): most runs first, a few named, runs of pull requests,
of other cards and stored after the judged run left out. On SQLite and on PostgreSQL.
"""

from __future__ import annotations

import sqlalchemy as sa
from both_backends import both_backends_engine
from store_cases import A100, REPO, nightly, store

from service.config import RoofguardConfig
from service.pipeline.basechoice import AskedBase
from service.pipeline.check import check_run
from service.store.db import session_scope
from service.store.queries import baseline_runs_by_branch

__all__ = ["both_backends_engine"]


def _held(engine: sa.Engine, before_run: int | None = None) -> list[tuple[str, int]]:
    with session_scope(engine, readonly=True) as session:
        return baseline_runs_by_branch(
            session=session, repo=REPO, device="H100-SXM5", before_run=before_run
        )


def _store_branches(engine: sa.Engine, runs: dict[str, int]) -> None:
    """``runs[branch]`` nightly runs of each branch, each on a day of its own."""
    n = 0
    for branch, count in runs.items():
        for _ in range(count):
            store(engine, nightly(n, branch=branch))
            n += 1


def test_branches_are_counted_most_runs_first(engine):
    _store_branches(engine, {"release/2.0": 2, "main": 4, "dev": 2})
    store(engine, nightly(20, branch="dev", kind="local"))
    store(engine, nightly(21, branch="feature", kind="pr", pull_request=7))
    store(engine, nightly(22, branch="main"), roof=A100)  # another card
    assert _held(engine) == [("main", 4), ("dev", 3), ("release/2.0", 2)]


def test_runs_stored_after_the_judged_run_are_left_out(engine):
    _store_branches(engine, {"main": 2})
    later = store(engine, nightly(10, branch="main"))
    store(engine, nightly(11, branch="main"))
    assert _held(engine, before_run=later) == [("main", 2)]


def test_the_note_names_a_few_branches_and_counts_the_rest(engine):
    _store_branches(engine, {"main": 5, "dev": 4, "release/2.0": 3, "next": 2, "old": 1})
    pr = nightly(30, branch="feature", kind="pr", pull_request=7, commit="f00d")
    with session_scope(engine) as session:
        outcome = check_run(
            session=session, run=pr, config=RoofguardConfig(), base=AskedBase(branch="mian")
        )
    assert outcome.verdict.baseline_runs == 0
    assert outcome.verdict.notes[-1] == (
        "no nightly or local run of base branch 'mian' is stored on H100-SXM5; this "
        "repository's are on main (5), dev (4), release/2.0 (3) and 2 more branches"
    )
