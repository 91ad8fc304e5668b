"""A run's content identity ignores the case of its repository's name (issue 32 item 5).

``--repo idem/cli`` and then ``--repo IDEM/CLI`` stored two runs of one repository, and the
baseline counted the run twice. Migration 0007 hashes the runs stored so anew and drops the
newer of two that are then twins.
"""

from __future__ import annotations

import hashlib
import json

import sqlalchemy as sa
from factories import make_run

from service.cli import run

JUDGED_BASE = ("judged_base_branch", "judged_base_sha", "judged_base_time")


def _ingest(report, url: str, repo: str) -> int:
    args = ["ingest", str(report), "--repo", repo, "--commit", "c1", "--branch", "main"]
    return run([*args, "--kind", "nightly", "--db", url])


def _rows(url: str, query: str) -> list[tuple[object, ...]]:
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        result = conn.execute(sa.text(query))
        rows = [tuple(r) for r in result] if result.returns_rows else []
    engine.dispose()
    return rows


def _ordered_hash(record: str) -> str:
    """The hash before migration 0017 (kernels in their order), of a run with no sources."""
    data = json.loads(record)
    data.pop("timestamp")
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def test_one_run_whatever_the_case_of_its_repository(tmp_path, capsys) -> None:
    url = f"sqlite:///{tmp_path / 'h.db'}"
    report = tmp_path / "r.json"
    report.write_text(make_run(repo=None, commit=None).model_dump_json(), encoding="utf-8")
    assert _ingest(report, url, "idem/cli") == 0
    assert _ingest(report, url, "IDEM/CLI") == 0
    assert "already ingested as run 1 (same content)" in capsys.readouterr().out
    assert _rows(url, "SELECT count(*) FROM runs") == [(1,)]


def test_the_upgrade_drops_the_newer_of_two_runs_that_differ_in_case_only(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'h.db'}"
    report = tmp_path / "r.json"
    report.write_text(make_run(repo=None, commit=None).model_dump_json(), encoding="utf-8")
    assert _ingest(report, url, "IDEM/CLI") == 0
    # As the hash of an earlier version left it: the name as spelt, so a second copy stored.
    _rows(url, "UPDATE runs SET content_hash = 'spelt' WHERE id = 1")
    assert _ingest(report, url, "idem/cli") == 0
    assert _rows(url, "SELECT id FROM runs ORDER BY id") == [(1,), (2,)]
    ((record,),) = _rows(url, "SELECT record_json FROM runs WHERE id = 2")
    _rows(url, f"UPDATE runs SET content_hash = '{_ordered_hash(str(record))}' WHERE id = 2")
    _rows(url, "UPDATE alembic_version SET version_num = '0006'")
    for table in ("run_columns", "upload_claims", "ingest_inputs"):  # made after 0007
        _rows(url, f"DROP TABLE {table}")
    # what 0011, 0012, 0014 and 0015 add
    for column in ("record_zlib", "judged", "judged_config", *JUDGED_BASE):
        _rows(url, f"ALTER TABLE runs DROP COLUMN {column}")
    _rows(url, "DROP INDEX uq_acceptances_run")  # what 0016 adds
    assert run(["db", "upgrade", "--db", url]) == 0
    assert _rows(url, "SELECT id FROM runs") == [(1,)]
    assert _rows(url, "SELECT DISTINCT run_id FROM measurements") == [(1,)]
    assert _ingest(report, url, "Idem/Cli") == 0
    assert _rows(url, "SELECT count(*) FROM runs") == [(1,)]
