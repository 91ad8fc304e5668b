"""A run's identity takes its kernels in no order; runs hashed before are found again.

The same run with its kernels listed in another order (a JSON upload, a report exported
again) was stored as a second run, and the history counted the night twice. Through the
real ``roofguard ingest`` and ``roofguard db upgrade`` on SQLite; a store as an earlier
version wrote it is made by giving its runs the hash that version gave (``_ordered_hash``,
its definition, pinned in ``test_identity_pinned`` before this change).
"""

from __future__ import annotations

import hashlib
import json

import sqlalchemy as sa
from factories import make_kernel, make_run

from collectors.schema import SourceRef
from service.cli import run
from service.store.ids import _dumps, identity, stored_record

SOURCE = SourceRef(path="/ci/7/run.json", row="1")
KERNELS = [
    make_kernel("gemv", time_s=1e-3, source=SOURCE),
    make_kernel("gemm", time_s=2e-3, flops={"tensor_bf16": 4e12}),
    make_kernel("softmax", time_s=3e-4, params={"path": "run.json"}),
]


def _run(kernels=KERNELS):
    return make_run(kernels=kernels, sources=(SOURCE,), repo=None, commit=None)


def _ordered_hash(record) -> str:
    """The content hash as roofguard gave it up to migration 0017: kernels in their order."""
    data = stored_record(record).model_dump(mode="json")
    data.pop("timestamp", None)
    data["repo"] = data["repo"].lower()
    for item in [*data["sources"], *(k["source"] for k in data["kernels"] if k.get("source"))]:
        item["path"] = ""
    return hashlib.sha256(_dumps(data).encode("utf-8")).hexdigest()


def test_the_identity_takes_the_kernels_in_no_order_but_each_figure() -> None:
    base = identity(_run())[1]
    shuffled = [KERNELS[2], KERNELS[0], KERNELS[1]]
    assert identity(_run(shuffled))[1] == base
    assert identity(_run(shuffled))[0] != identity(_run())[0], "the record keeps its order"
    slower = KERNELS[1].model_copy(update={"duration_s": 2.001e-3})
    for changed in ([KERNELS[0], slower, KERNELS[2]], KERNELS[:2]):
        assert identity(_run(changed))[1] != base


def _ingest(report, url: str) -> int:
    args = ["ingest", str(report), "--repo", "acme/kernels", "--commit", "c1", "--branch", "main"]
    return run([*args, "--kind", "nightly", "--db", url])


def _rows(url: str, query: str, **params: object) -> list[tuple[object, ...]]:
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        result = conn.execute(sa.text(query), params)
        rows = [tuple(r) for r in result] if result.returns_rows else []
    engine.dispose()
    return rows


def _reports(tmp_path):
    """The run's report, and the same report exported again with its kernels in reverse."""
    first, again = tmp_path / "run.json", tmp_path / "again" / "run.json"
    again.parent.mkdir()
    first.write_text(_run().model_dump_json(), encoding="utf-8")
    data = json.loads(first.read_text(encoding="utf-8"))
    data["kernels"].reverse()
    again.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return first, again


def test_a_report_exported_again_in_another_order_is_the_run_stored(tmp_path, capsys) -> None:
    url = f"sqlite:///{tmp_path / 'h.db'}"
    first, again = _reports(tmp_path)
    assert _ingest(first, url) == 0
    assert _ingest(again, url) == 0
    assert capsys.readouterr().out.endswith("already ingested as run 1 (same content)\n")
    assert _rows(url, "SELECT count(*) FROM runs") == [(1,)]


def _as_stored_before(url: str) -> None:
    """The store as the version before 0017 left it: each run's hash takes its kernels' order."""
    for run_id, record in _rows(url, "SELECT id, record_json FROM runs"):
        stored = make_run().model_validate_json(str(record))
        for table, key in (("runs", "id"), ("ingest_inputs", "run_id")):
            query = f"UPDATE {table} SET content_hash = :h WHERE {key} = :id"
            _rows(url, query, h=_ordered_hash(stored), id=run_id)
    _rows(url, "UPDATE alembic_version SET version_num = '0016'")


def test_a_store_hashed_in_order_finds_its_runs_again_after_the_upgrade(tmp_path, capsys) -> None:
    url = f"sqlite:///{tmp_path / 'h.db'}"
    first, again = _reports(tmp_path)
    assert _ingest(first, url) == 0
    hashed = _rows(url, "SELECT content_hash FROM runs")
    _as_stored_before(url)
    assert _rows(url, "SELECT content_hash FROM runs") != hashed
    assert run(["db", "upgrade", "--db", url]) == 0
    assert _rows(url, "SELECT content_hash FROM runs") == hashed, "as an ingest now hashes it"
    kept = _rows(url, "SELECT i.content_hash = r.content_hash FROM ingest_inputs i JOIN runs r")
    assert kept == [(1,)], "an ingest of the same files again still reads none"
    capsys.readouterr()
    for report in (first, again):
        assert _ingest(report, url) == 0
        assert capsys.readouterr().out.endswith("already ingested as run 1 (same content)\n")
    assert _rows(url, "SELECT count(*) FROM runs") == [(1,)]


def test_of_twins_stored_before_the_first_is_found_and_the_other_stays(tmp_path, capsys) -> None:
    url = f"sqlite:///{tmp_path / 'h.db'}"
    first, again = _reports(tmp_path)
    third = tmp_path / "third.json"
    third.write_text(_run([KERNELS[1], KERNELS[2], KERNELS[0]]).model_dump_json(), "utf-8")
    assert _ingest(first, url) == 0
    ((hashed,),) = _rows(url, "SELECT content_hash FROM runs")
    _as_stored_before(url)
    _rows(url, "UPDATE alembic_version SET version_num = '0017'")
    assert _ingest(again, url) == 0  # stored twice, as the version before did
    _as_stored_before(url)
    assert run(["db", "upgrade", "--db", url]) == 0
    hashes = _rows(url, "SELECT id, content_hash FROM runs ORDER BY id")
    assert hashes[0] == (1, hashed) and hashes[1][1] != hashed
    capsys.readouterr()
    assert _ingest(third, url) == 0
    assert capsys.readouterr().out.endswith("already ingested as run 1 (same content)\n")
    assert _rows(url, "SELECT count(*) FROM runs") == [(2,)]


def test_a_benchmark_file_with_its_entries_reversed_is_the_run_stored(
    tmp_path, capsys, corpus_dir
) -> None:
    """Each kernel's place in its file (``benchmarks[3]``) moves with the order: not its content."""
    source = corpus_dir / "gbench" / "google_benchmark__tools_gbench_Inputs_test1_run1.json"
    data = json.loads(source.read_text(encoding="utf-8"))
    first, again = tmp_path / "gb.json", tmp_path / "again" / "gb.json"
    again.parent.mkdir()
    first.write_text(json.dumps(data), encoding="utf-8")
    data["benchmarks"].reverse()
    again.write_text(json.dumps(data), encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'h.db'}"
    for report in (first, again):
        argv = ["ingest", str(report), "--repo", "acme/gb", "--commit", "g1", "--branch", "main"]
        assert run([*argv, "--device", "H100-SXM5", "--db", url]) == 0
    assert capsys.readouterr().out.endswith("already ingested as run 1 (same content)\n")
    assert _rows(url, "SELECT count(*) FROM runs") == [(1,)]
