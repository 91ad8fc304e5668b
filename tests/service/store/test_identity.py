"""A run is its content: re-runs, retries, other paths and copies store it once (issue 14.2).

Through the real ``roofguard ingest`` on a real report without timestamps (an ncu CSV from
the corpus: its run is dated when it is read), and through the store's migration for runs
hashed the old way.
"""

from __future__ import annotations

import hashlib
import json
import shutil

import sqlalchemy as sa
from alembic import command
from factories import make_kernel, make_run

from collectors.schema import SourceRef
from service.cli import run
from service.store.db import alembic_config, make_engine, session_scope
from service.store.ids import canonical_json, identity, stored_record
from service.store.queries import get_run_record
from service.store.tables import Run, table_of

REPORT = "ncu-csv/meinie0826_Roofline-Analysis__torch_sdpa_flash__gqa_bf16_b32_ctx8k_p64.ncu.csv"


def _ingest(path, db: str) -> int:
    args = ["ingest", str(path), "--repo", "acme/kernels", "--commit", "c1", "--branch", "main"]
    return run([*args, "--kind", "nightly", "--db", db])


def _runs(db: str) -> list[tuple[int, str]]:
    engine = make_engine(db)
    try:
        with engine.connect() as conn:
            table = table_of(Run)
            return [tuple(r) for r in conn.execute(sa.select(table.c.id, table.c.record_json))]
    finally:
        engine.dispose()


def test_ingest_again_by_any_path_or_copy_stores_one_run(
    tmp_path, corpus_dir, capsys, monkeypatch
) -> None:
    db = f"sqlite:///{tmp_path / 'h.db'}"
    work = tmp_path / "workspace" / "reports"
    work.mkdir(parents=True)
    report = work / "profile.csv"
    shutil.copy(corpus_dir / REPORT, report)
    assert _ingest(report, db) == 0
    assert capsys.readouterr().out.startswith("ingested run 1 ")
    other = tmp_path / "elsewhere"
    other.mkdir()
    shutil.copy(report, other / "renamed-copy.csv")
    monkeypatch.chdir(work)
    for path in ("profile.csv", "./../reports/profile.csv", report, other / "renamed-copy.csv"):
        assert _ingest(path, db) == 0  # a second later: "now" moved, the run did not
        assert capsys.readouterr().out == "already ingested as run 1 (same content)\n", path
    ((_, record),) = _runs(db)
    assert str(tmp_path) not in record, "no machine-local path in the stored record"
    sources = json.loads(record)["sources"]
    assert [s["path"] for s in sources] == ["profile.csv"], "the file name stays"


def test_the_identity_leaves_out_time_and_file_names_but_not_measurements() -> None:
    def one(**kw):
        source = SourceRef(path=kw.pop("path", "/ci/1/run.json"), row="3")
        kernel = make_kernel("gemv", time_s=kw.pop("time_s", 1e-3), source=source)
        return make_run(kernels=[kernel], sources=(source,), **kw)

    base = identity(one())[1]
    assert identity(one(path="C:\\ci\\2\\other.json"))[1] == base
    assert identity(one(timestamp=one().timestamp.replace(year=2020)))[1] == base
    for changed in (one(time_s=1.001e-3), one(commit="d00d"), one(kind="pr", pull_request=3)):
        assert identity(changed)[1] != base
    stored = stored_record(one(path="C:\\ci\\2\\other.json"))
    assert stored.sources[0].path == stored.kernels[0].source.path == "other.json"


def _old_hash(record) -> str:
    """How runs were hashed before migration 0004: timestamp and paths included."""
    return hashlib.sha256(canonical_json(record).encode("utf-8")).hexdigest()


def test_migration_0004_rehashes_stored_runs_and_keeps_the_first_of_twins(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = make_engine(url)
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "0003")
    source = SourceRef(path="/tmp/roofguard-upload-x1/0/run.json")
    twins = [
        make_run(kernels=[make_kernel("gemv")], sources=(source,)).model_copy(
            update={"timestamp": make_run().timestamp.replace(hour=h)}
        )
        for h in (1, 2)
    ]
    with engine.begin() as conn:
        for table, name in (("repositories", "acme/kernels"), ("devices", "H100-SXM5")):
            conn.execute(
                sa.text(f"INSERT INTO {table} (name, created_at) VALUES (:n, '2026-01-01')"),
                {"n": name},
            )
        for record in twins:
            conn.execute(
                sa.text(
                    "INSERT INTO runs (repo_id, device_id, kind, timestamp, roof_source, "
                    "roof_label, roof_json, trusted, content_hash, record_json, created_at) "
                    "VALUES (1, 1, 'nightly', :ts, 'datasheet', 'H100', '{}', 1, :h, :r, :ts)"
                ),
                {"ts": record.timestamp, "h": _old_hash(record), "r": canonical_json(record)},
            )
    engine.dispose()
    engine = make_engine(url)
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "head")
    rows = dict(_hashes(engine))
    assert rows[1] == identity(twins[0])[1] != rows[2], "the first twin is what uploads find"
    with session_scope(engine, readonly=True) as session:
        assert get_run_record(session=session, run_id=2).sources[0].path == "run.json"
    engine.dispose()


def _hashes(engine) -> list[tuple[int, str]]:
    table = table_of(Run)
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(sa.select(table.c.id, table.c.content_hash))]
