"""A run read as columns is stored as the same run read as records (issue 29).

The column path (``collectors.collect_columns``, ``service.store.batch_ingest``) must give
every kernel the content identity, record text, kernel rows and measurement rows the record
path (``collect``, ``rules.place_run``, ``ingest_run``) gives, on SQLite and PostgreSQL, on
real corpus files and on generated ones whose kernels change shape along the file.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa
from both_backends import both_backends_engine
from column_files import write_gbench, write_ncu

from collectors import RunColumns, RunRecord, collect, collect_columns
from rules import Roof, place_run
from service.store.batch_ingest import ingest_columns
from service.store.db import session_scope
from service.store.ids import identity, identity_of_columns
from service.store.ingest import ingest_run
from service.store.tables import Kernel, Measurement, Run, table_of

__all__ = ["both_backends_engine"]

ROOF = Roof(
    device="H100-SXM5",
    source="datasheet",
    peak_flop_per_s={"fp32": 6.7e13, "fp16": 1.3e14, "fp64": 0.0},
    bandwidth_byte_per_s={"dram": 3.35e12, "l2": 1.2e13},
)
WHEN = datetime(2026, 12, 1, 3, tzinfo=UTC)


def _stamped(run: RunRecord, repo: str) -> RunRecord:
    update = {"repo": repo, "commit": "a" * 40, "branch": "main", "timestamp": WHEN}
    return run.model_copy(update=update)


def _both(path: Path, repo: str = "acme/kernels") -> tuple[RunRecord, RunColumns]:
    columns = collect_columns(path)
    columns.head = _stamped(columns.head, repo)
    return _stamped(collect(path), repo), columns


def _cases(tmp_path: Path, corpus: Path | None = None) -> list[Path]:
    files = [
        write_gbench(tmp_path / "g.json", 700),
        write_ncu(tmp_path / "n.csv", 1500),
        write_ncu(tmp_path / "gaps.csv", 1500, gap_every=97),  # failed replays stay columns
    ]
    if corpus is not None:
        files.append(corpus / "gbench" / "donar337_numa-pmr__bench.json")
    return files


def test_identity_equal_on_generated_and_corpus_files(tmp_path: Path, corpus_dir: Path) -> None:
    for path in _cases(tmp_path, corpus_dir):
        run, columns = _both(path)
        assert identity_of_columns(columns) == identity(run), path
        assert columns.kernel_count == len(run.kernels)


def test_identity_equal_across_chunks(tmp_path: Path) -> None:
    """Runs longer than a chunk of kernels (10,000) and a pandas chunk of rows (8,192)."""
    ncu = write_ncu(tmp_path / "n.csv", 20_500, gap_every=997)
    for path in (ncu, write_gbench(tmp_path / "g.json", 12_000)):
        run, columns = _both(path)
        assert len(columns.chunks) > 1
        assert identity_of_columns(columns) == identity(run), path


def test_identity_of_columns_takes_the_kernels_in_no_order(tmp_path: Path) -> None:
    """A file with its entries reversed: each kernel's place moves, the run's hash does not."""
    path = write_gbench(tmp_path / "g.json", 700)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["benchmarks"].reverse()
    again = tmp_path / "again.json"
    again.write_text(json.dumps(data), encoding="utf-8")
    (_, columns), (run, reversed_columns) = _both(path), _both(again)
    assert identity_of_columns(reversed_columns)[1] == identity_of_columns(columns)[1]
    assert identity(run)[1] == identity_of_columns(columns)[1]


def _stored(engine: sa.Engine, repo: str) -> dict[str, Any]:
    runs, kernels, rows = table_of(Run), table_of(Kernel), table_of(Measurement)
    with engine.connect() as conn:
        run = conn.execute(
            sa.select(runs.c.id, runs.c.content_hash, runs.c.record_json, runs.c.roof_json)
            .join_from(runs, table_of(Run).metadata.tables["repositories"])
            .where(sa.text("repositories.name = :repo"))
            .params(repo=repo)
        ).one()
        joined = (
            sa.select(kernels.c.key, kernels.c.name, rows)
            .join_from(rows, kernels, rows.c.kernel_id == kernels.c.id)
            .where(rows.c.run_id == run.id)
            .order_by(kernels.c.key)
        )
        measured = [
            {k: v for k, v in r._mapping.items() if k not in ("id", "run_id", "kernel_id")}
            for r in conn.execute(joined)
        ]
    return {"run": tuple(run)[1:], "measurements": measured}


def test_stored_rows_equal(engine: sa.Engine, tmp_path: Path, corpus_dir: Path) -> None:
    for index, path in enumerate(_cases(tmp_path, corpus_dir)):
        run, _ = _both(path, f"acme/records{index}")
        _, columns = _both(path, f"acme/columns{index}")
        with session_scope(engine) as session:
            placed = place_run(run, ROOF, band=0.2)
            assert ingest_run(session=session, run=run, placements=placed, roof=ROOF).created
        with session_scope(engine) as session:
            stored = ingest_columns(session=session, columns=columns, roof=ROOF, band=0.2)
            assert stored.created and stored.kernels == len(run.kernels)
        by_records = _stored(engine, f"acme/records{index}")
        by_columns = _stored(engine, f"acme/columns{index}")
        assert by_columns["measurements"] == by_records["measurements"], path
        record, roof = by_columns["run"][1:]  # the hash has the repository: compared above
        names = (f"acme/columns{index}", f"acme/records{index}")
        assert (record.replace(*names), roof) == by_records["run"][1:]


def test_same_content_twice_is_stored_once(engine: sa.Engine, tmp_path: Path) -> None:
    path = write_gbench(tmp_path / "g.json", 300)
    run, columns = _both(path)
    with session_scope(engine) as session:
        first = ingest_run(session=session, run=run, placements=place_run(run, ROOF), roof=ROOF)
    with session_scope(engine) as session:
        again = ingest_columns(session=session, columns=columns, roof=ROOF)
    assert (again.created, again.run_id, again.content_hash) == (
        False,
        first.run_id,
        first.content_hash,
    )


def test_failed_ingest_leaves_nothing(engine: sa.Engine, tmp_path: Path) -> None:
    """One transaction: a failure after the run row is written takes it back."""
    _, columns = _both(write_ncu(tmp_path / "n.csv", 50))
    with pytest.raises(RuntimeError), session_scope(engine) as session:
        assert ingest_columns(session=session, columns=columns, roof=ROOF).created
        raise RuntimeError("after the rows: the transaction must roll back")
    with engine.connect() as conn:
        for table in (Run, Measurement):
            count = sa.select(sa.func.count()).select_from(table_of(table))
            assert conn.execute(count).scalar() == 0


def test_no_work_counted_is_no_regime_as_the_rules_place_it() -> None:
    """A huge run's kernel with 0 FLOPs and 0 bytes was stored compute-bound."""
    from rules import place_chunk
    from rules.hardware import builtin_catalog

    roof = builtin_catalog().lookup("H100-SXM5").roof()
    fp32, dram = np.zeros(2), np.array([0.0, 4096.0])
    placed = place_chunk({"fp32": fp32}, {"dram": dram}, np.full(2, 2e-6), roof, band=0.1)
    assert placed.regime == [None, "memory-bound"]
