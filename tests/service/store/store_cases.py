"""History-store cases run on every backend: test_store.py (SQLite) and test_store_postgres.py.

Each module provides an ``engine`` fixture on a fresh, migrated store.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from factories import make_kernel, make_run

import rules.levelstore as levelstore
from collectors.schema import RunRecord
from rules.frames import HISTORY_COLUMNS
from rules.hardware import builtin_catalog
from rules.placement import place_run
from rules.roofline import Placement, Roof
from rules.verdict import Finding, Severity
from service.config import RoofguardConfig
from service.pipeline.check import CheckOutcome, check_run
from service.pipeline.reruns import Reruns
from service.store.baselines import accept_baseline
from service.store.db import session_scope
from service.store.history import (
    GATE_COLUMNS,
    BaselineQuery,
    kernel_history,
    nightly_history,
    read_baseline,
)
from service.store.ingest import ingest_run, save_findings
from service.store.queries import get_run, get_run_record, list_findings, list_runs

REPO = "acme/kernels"
H100 = builtin_catalog().lookup("H100-SXM5").roof()
A100 = builtin_catalog().lookup("A100-SXM4-80GB").roof()


def day(n: float) -> datetime:
    return datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=n)


def store(engine: sa.Engine, run: RunRecord, roof: Roof = H100, trusted: bool = True) -> int:
    with session_scope(engine) as session:
        result = ingest_run(
            session=session, run=run, placements=place_run(run, roof), roof=roof, trusted=trusted
        )
    return result.run_id


def nightly(n: int, *, time_a: float = 1e-3, branch: str = "main", **kw: object) -> RunRecord:
    kernels = [make_kernel("a", time_s=time_a), make_kernel("b", time_s=2e-3)]
    defaults: dict[str, object] = {"commit": f"c{n:03d}", "timestamp": day(n), "kind": "nightly"}
    return make_run(kernels=kernels, branch=branch, **{**defaults, **kw})  # type: ignore[arg-type]


def baseline(engine: sa.Engine, **kw: object):
    return read(engine, **kw).frame


def read(engine: sa.Engine, **kw: object):
    args: dict[str, object] = {
        "repo": REPO,
        "device": "H100-SXM5",
        "roof_source": "datasheet",
        "base_branch": "main",
        "window": 30,
    }
    with session_scope(engine, readonly=True) as session:
        query = BaselineQuery(**{**args, **kw})  # type: ignore[arg-type]
        return read_baseline(session=session, query=query)


def count(engine: sa.Engine, table: str) -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one())


# --- ingest -------------------------------------------------------------------------------


def test_ingest_stores_the_record_and_the_derived_figures(engine):
    run = make_run(kernels=[make_kernel("gemv", time_s=2e-3, flops={"tensor_fp16": 2e9})])
    placement = place_run(run, H100)["gemv"]
    run_id = store(engine, run)
    with session_scope(engine, readonly=True) as session:
        assert get_run_record(session=session, run_id=run_id) == run
        summary = get_run(session=session, run_id=run_id)
        history = kernel_history(session=session, repo=REPO, key="gemv")
    assert (summary.repo, summary.device, summary.kind) == (REPO, "H100-SXM5", "nightly")
    assert summary.roof_label == "H100-SXM5 (datasheet)"
    assert list(history["percent_of_roof"]) == [pytest.approx(placement.percent_of_roof)]
    assert history.loc[0, "regime"] == placement.regime == "memory-bound"
    assert history.loc[0, "binding"] == "dram"
    assert history.loc[0, "bytes_dram"] == 4e9 and history.loc[0, "total_flops"] == 2e9


def test_the_same_content_twice_is_a_noop_that_says_so(engine):
    run = nightly(1)
    first = store(engine, run)
    with session_scope(engine) as session:
        again = ingest_run(session=session, run=run, placements=place_run(run, H100), roof=H100)
    assert (again.run_id, again.created) == (first, False)
    assert count(engine, "runs") == 1 and count(engine, "measurements") == 2
    assert store(engine, nightly(1, commit="other")) != first  # other content, a new run


class FailingPlacements(Mapping[str, Placement]):
    """Placements that fail once the run row is already written (a crash mid-ingest)."""

    def __getitem__(self, key: str) -> Placement:
        raise RuntimeError(f"placement of {key} failed")

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def test_a_failure_mid_ingest_leaves_nothing_behind(engine):
    with pytest.raises(RuntimeError, match="placement of a failed"), session_scope(engine) as s:
        ingest_run(session=s, run=nightly(1), placements=FailingPlacements(), roof=H100)
    for table in ("repositories", "devices", "runs", "kernels", "measurements"):
        assert count(engine, table) == 0, table
    assert store(engine, nightly(1)) > 0  # and the store still works


def test_list_runs_filters_newest_first(engine):
    for n in range(3):
        store(engine, nightly(n))
    store(engine, nightly(9, branch="feature", kind="pr", pull_request=7))
    with session_scope(engine, readonly=True) as session:
        runs = list_runs(session=session, repo=REPO, kind="nightly", limit=2)
        prs = list_runs(session=session, pull_request=7)
    assert [r.commit for r in runs] == ["c002", "c001"]
    assert [r.kind for r in prs] == ["pr"]


def test_findings_round_trip_and_a_recheck_replaces_them(engine):
    run_id = store(engine, nightly(1))
    finding = Finding(
        rule="roof-drop",
        kernel="a",
        severity=Severity.FAIL,
        message="dropped",
        numbers={"current": 41.0, "center": 80.0},
    )
    with session_scope(engine) as session:
        save_findings(session=session, run_id=run_id, findings=[finding, finding])
        save_findings(session=session, run_id=run_id, findings=[finding])
    with session_scope(engine, readonly=True) as session:
        assert list_findings(session=session, run_id=run_id) == [finding]


# --- baselines ----------------------------------------------------------------------------


def test_pull_request_runs_never_become_baseline(engine):
    ids = [store(engine, nightly(n)) for n in range(3)]
    store(engine, nightly(5, kind="pr", pull_request=3, branch="feature"))
    store(engine, nightly(6, kind="pr", pull_request=4))  # a PR run that claims branch main
    store(engine, nightly(7, kind="local", branch="feature"))  # local, off the base branch
    local = store(engine, nightly(8, kind="local"))  # local on the base branch counts
    read_back = read(engine)
    assert read_back.runs == (*ids, local)
    assert set(read_back.frame["kind"]) == {"nightly", "local"}


def test_baseline_has_the_history_columns_oldest_first(engine):
    for n in (3, 1, 2):
        store(engine, nightly(n))
    frame = baseline(engine)
    assert set(HISTORY_COLUMNS) <= set(frame.columns)
    assert list(frame["commit"]) == ["c001", "c001", "c002", "c002", "c003", "c003"]
    assert str(frame["timestamp"].dt.tz) == "UTC"
    assert frame["percent_of_roof"].dtype == "float64"


def test_window_keeps_the_most_recent_runs(engine):
    for n in range(10):
        store(engine, nightly(n))
    frame = baseline(engine, window=4)
    assert sorted(set(frame["commit"])) == ["c006", "c007", "c008", "c009"]


def test_up_to_a_run_the_window_counts_that_run_as_it_did_when_it_was_new(engine):
    """The caller leaves the judged run out, so its window holds the runs before it."""
    ids = [store(engine, nightly(n)) for n in range(10)]
    assert read(engine, window=4, up_to_run=ids[6]).runs == tuple(ids[3:7])
    assert read(engine, window=4, up_to_run=ids[-1]).runs == read(engine, window=4).runs


def test_older_runs_carry_only_what_the_gate_reads_when_asked(engine):
    for n in range(6):
        store(engine, nightly(n))
    full_read = read(engine)
    full = full_read.frame
    for kw in ({}, {"kernel_keys": ["a"]}):
        lean_read = read(engine, full_runs=2, **kw)
        lean = lean_read.frame
        expected = full[full["kernel_key"].isin(kw.get("kernel_keys", ["a", "b"]))]
        assert list(lean.columns) == list(full.columns)
        assert len(lean) == len(expected) == 6 * len(kw.get("kernel_keys", "ab"))
        newest = lean["commit"].isin(["c004", "c005"])
        for column in GATE_COLUMNS[2:]:  # the gate's figures: every run's, as stored
            assert lean[column].tolist() == expected[column].tolist()
        for column in ("regime", "binding", "bytes_dram"):
            assert lean.loc[newest, column].notna().all()
            assert lean.loc[~newest, column].isna().all()
        assert lean_read.runs == full_read.runs


def test_merge_base_cuts_the_baseline_inclusively(engine):
    for n in range(6):
        store(engine, nightly(n))
    read_back = read(engine, before_commit="c003")
    assert sorted(set(read_back.frame["commit"])) == ["c000", "c001", "c002", "c003"]
    assert read_back.merge_base_found is True
    assert sorted(set(baseline(engine, before_commit="c00", window=2)["commit"])) == [
        "c004",
        "c005",
    ]  # fmt: skip  (an abbreviated SHA matches by prefix)


def test_unknown_merge_base_falls_back_to_a_time_and_says_so(engine):
    for n in range(6):
        store(engine, nightly(n))
    read_back = read(engine, before_commit="deadbeef", before_timestamp=day(1.5))
    assert sorted(set(read_back.frame["commit"])) == ["c000", "c001"]
    assert read_back.merge_base_found is False


def test_acceptance_restarts_the_kernels_baseline(engine):
    ids = [store(engine, nightly(n)) for n in range(5)]
    with session_scope(engine) as session:
        accept_baseline(
            session=session,
            repo=REPO,
            kernel_key="a",
            device="H100-SXM5",
            accepted_by="octocat",
            run_id=ids[2],
            accepted_at=day(2.5),
        )
        accept_baseline(
            session=session,
            repo=REPO,
            kernel_key="b",
            device="A100-SXM4-80GB",
            accepted_by="octocat",
            accepted_at=day(4.5),
        )
    read_back = read(engine)
    frame = read_back.frame
    assert list(frame.loc[frame["kernel_key"] == "a", "commit"]) == ["c003", "c004"]
    assert len(frame.loc[frame["kernel_key"] == "b"]) == 5  # accepted on another device only
    # Restarted within the history read: not a kernel young on its card (crossdevice).
    assert {k: (a.accepted_by, a.run_id) for k, a in read_back.restarted.items()} == {
        "a": ("octocat", ids[2])
    }
    assert read(engine, window=2).restarted == {}  # both runs read were measured after it
    with session_scope(engine) as session:  # the same accept again: nothing new, nor later
        again = accept_baseline(
            session=session,
            repo=REPO,
            kernel_key="a",
            device="H100-SXM5",
            accepted_by="x",
            run_id=ids[2],
        )
    assert not again.created and count(engine, "baseline_acceptances") == 2


def test_like_with_like_device_roof_and_environment(engine):
    store(engine, nightly(1))
    store(engine, nightly(2), roof=A100)
    report = Roof("H100-SXM5", "report", H100.peak_flop_per_s, H100.bandwidth_byte_per_s)
    store(engine, nightly(3), roof=report)
    frame = baseline(engine)
    assert set(frame["commit"]) == {"c001"}
    assert set(baseline(engine, roof_source=None)["commit"]) == {"c001", "c003"}
    assert {"driver", "clock_control", "cache_control", "trusted"} <= set(frame.columns)
    assert baseline(engine, device="B200").empty and baseline(engine, repo="x/y").empty


def test_kernel_keys_narrow_the_baseline(engine):
    store(engine, nightly(1))
    frame = baseline(engine, kernel_keys=["b", "never-seen"])
    assert set(frame["kernel_key"]) == {"b"}


def test_nightly_history_of_a_period(engine):
    for n in range(10):
        store(engine, nightly(n))
    store(engine, nightly(4, kind="pr", pull_request=2, commit="pr"))
    with session_scope(engine, readonly=True) as session:
        week = nightly_history(session=session, repo=REPO, start=day(3), end=day(6))
        everything = nightly_history(session=session, repo=None, start=day(0), end=day(99))
    assert sorted(set(week["commit"])) == ["c003", "c004", "c005"]
    assert set(HISTORY_COLUMNS) <= set(week.columns) and set(week["repo"]) == {REPO}
    assert len(everything) == 20


# SQLite's reflection skips expression indexes (the next test checks that one for real).
@pytest.mark.filterwarnings("ignore:Skipped unsupported reflection of expression-based index")
@pytest.mark.filterwarnings("ignore:autogenerate skipping metadata-specified expression-based")
def test_the_migrations_build_exactly_the_tables(engine):
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext
    from sqlmodel import SQLModel

    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        assert compare_metadata(context, SQLModel.metadata) == []


def test_a_repository_name_is_unique_whatever_its_letter_case(engine):
    insert = sa.text("INSERT INTO repositories (name, created_at) VALUES (:n, :t)")
    with engine.begin() as conn:
        conn.execute(insert, {"n": "Acme/Kernels", "t": day(0)})
    with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:
        conn.execute(insert, {"n": "acme/KERNELS", "t": day(0)})


# --- findings of a re-judged run ------------------------------------------------------------


def _judge(engine: sa.Engine, run: RunRecord, *reruns: RunRecord) -> CheckOutcome:
    with session_scope(engine) as session:
        return check_run(
            session=session, run=run, config=RoofguardConfig(), reruns=Reruns(runs=reruns)
        )


def _finding_rows(engine: sa.Engine, run_id: int) -> list[tuple[object, ...]]:
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT id, created_at, rule, severity FROM findings WHERE run_id = :r"),
            {"r": run_id},
        )
        return [tuple(row) for row in rows]


def _stored(engine: sa.Engine, run_id: int) -> list[Finding]:
    with session_scope(engine, readonly=True) as session:
        return list_findings(session=session, run_id=run_id)


def test_a_rerun_check_stores_the_final_verdicts_findings_once(engine):
    for n in range(8):
        store(engine, nightly(n, time_a=1e-3 * (1 + 0.01 * (n % 3))))
    pr_run = {"kind": "pr", "pull_request": 7, "branch": "feature", "commit": "f00d"}
    pr, again = nightly(9, time_a=1.25e-3, **pr_run), nightly(9, time_a=1.24e-3, **pr_run)
    screen = _judge(engine, pr)  # the screening pass stores the run: "a" is a suspect
    assert screen.created and _stored(engine, screen.run_id) == list(screen.verdict.findings)
    assert {f.severity for f in screen.verdict.findings if f.kernel == "a"} == {Severity.WARN}
    final = _judge(engine, pr, again)  # the re-measurement confirms it
    assert final.run_id == screen.run_id and not final.created
    assert {f.severity for f in final.verdict.findings if f.kernel == "a"} == {Severity.FAIL}
    assert _stored(engine, final.run_id) == list(final.verdict.findings)
    rows = _finding_rows(engine, final.run_id)
    repeat = _judge(engine, pr, again)  # the same check again changes nothing
    assert repeat.verdict.findings == final.verdict.findings
    assert _finding_rows(engine, final.run_id) == rows
    assert count(engine, "runs") == 9 and count(engine, "findings") == len(rows)
    # A later look without re-measurements reads the final judgement, not the screening one.
    assert _judge(engine, pr).verdict.findings == final.verdict.findings


# --- the gate's stored levels ---------------------------------------------------------------


def _levels(engine: sa.Engine) -> list[tuple[object, ...]]:
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT * FROM gate_levels ORDER BY digest"))
        return [tuple(row) for row in rows]


def _gate_numbers(outcome: CheckOutcome) -> list[dict[str, object]]:
    return [f.numbers for f in outcome.verdict.findings if f.rule == "roof-drop"]


def test_a_nightly_check_stores_the_levels_the_next_pr_reads(engine):
    for n in range(12):
        store(engine, nightly(n, time_a=1e-3 * (1 + 0.01 * (n % 3))))
    assert _levels(engine) == []  # ingest alone judges nothing
    night = _judge(engine, nightly(12))
    stored = _levels(engine)
    assert len(stored) == 2 and {row[1] for row in stored} == {night.run_id}
    pr_run = {"kind": "pr", "pull_request": 7, "branch": "feature"}
    read = _judge(engine, nightly(13, time_a=1.3e-3, commit="f00d", **pr_run))
    assert _levels(engine) == stored  # every level was read, none computed
    with engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM gate_levels"))
    computed = _judge(engine, nightly(13, time_a=1.3e-3, commit="beef", **pr_run))
    assert _gate_numbers(read) == _gate_numbers(computed) != []
    assert _levels(engine) == stored  # what the PR computed is what the nightly had stored


def test_a_nightly_run_judged_again_computes_no_levels(engine, monkeypatch):
    for n in range(12):
        store(engine, nightly(n, time_a=1e-3 * (1 + 0.01 * (n % 3))))
    _judge(engine, nightly(12))
    computed: list[int] = []
    compute = levelstore.current_levels

    def counting(histories, **kw):
        computed.append(len(histories))
        return compute(histories, **kw)

    monkeypatch.setattr(levelstore, "current_levels", counting)
    again = _judge(engine, nightly(12))  # its page, or the same upload again: read-only
    assert not again.created and computed == []


def test_the_levels_of_runs_a_month_older_are_let_go(engine):
    for n in range(12):
        store(engine, nightly(n, time_a=1e-3 * (1 + 0.01 * (n % 3))))
    kept = _judge(engine, nightly(12)).run_id
    for n in range(13, 42):
        store(engine, nightly(n, time_a=1e-3 * (1 + 0.01 * (n % 3))))
    newer = _judge(engine, nightly(42)).run_id  # 30 days later: both kept
    assert {row[1] for row in _levels(engine)} == {kept, newer}
    newest = _judge(engine, nightly(43)).run_id  # 31 days later: the first ones go
    assert {row[1] for row in _levels(engine)} == {newer, newest}
