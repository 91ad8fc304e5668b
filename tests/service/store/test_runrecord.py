"""A large run record is stored compressed and read back whole (``service.store.runrecord``).

On SQLite and PostgreSQL: a record from ``PACK_FROM`` characters on is kept in
``runs.record_zlib`` (``record_json`` empty), by the record path and the column path alike;
smaller ones stay text; every reader (``get_run_record``, ``baseline_kernels``) gives the
same record either way; migration 0011 goes down (writing the records back as text) and up.
"""

from __future__ import annotations

import zlib
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest
import sqlalchemy as sa
from both_backends import both_backends_engine
from column_files import write_gbench

from collectors import RunRecord, collect, collect_columns
from rules import Roof, place_run
from service.store import runrecord
from service.store.batch_ingest import ingest_columns
from service.store.db import HEAD_REVISION, alembic_config, current_revision, session_scope
from service.store.ids import identity
from service.store.ingest import ingest_run
from service.store.profiles import baseline_kernels
from service.store.queries import get_run_record
from service.store.tables import Run, table_of

__all__ = ["both_backends_engine"]

ROOF = Roof(
    device="H100-SXM5",
    source="datasheet",
    peak_flop_per_s={"fp32": 6.7e13},
    bandwidth_byte_per_s={"dram": 3.35e12},
)
WHEN = datetime(2026, 12, 1, 3, tzinfo=UTC)
_RUNS = table_of(Run)


def _run(path: Path, repo: str) -> RunRecord:
    update = {"repo": repo, "commit": "a" * 40, "branch": "main", "timestamp": WHEN}
    return collect(path).model_copy(update=update)


def _by_records(engine: sa.Engine, run: RunRecord) -> int:
    with session_scope(engine) as session:
        placed = place_run(run, ROOF)
        return ingest_run(session=session, run=run, placements=placed, roof=ROOF).run_id


def _by_columns(engine: sa.Engine, path: Path, repo: str) -> int:
    columns = collect_columns(path)
    columns.head = _run(path, repo).model_copy(update={"kernels": ()})
    with session_scope(engine) as session:
        return ingest_columns(session=session, columns=columns, roof=ROOF).run_id


def _row(engine: sa.Engine, run_id: int) -> tuple[str, bytes | None]:
    with engine.connect() as conn:
        stmt = sa.select(_RUNS.c.record_json, _RUNS.c.record_zlib).where(_RUNS.c.id == run_id)
        text, packed = conn.execute(stmt).one()
    return text, packed


def _read(engine: sa.Engine, run_id: int) -> RunRecord:
    with session_scope(engine) as session:
        return get_run_record(session=session, run_id=run_id)


def test_a_large_record_is_stored_compressed_by_both_paths_and_read_whole(
    engine: sa.Engine, tmp_path: Path
) -> None:
    path = write_gbench(tmp_path / "g.json", 1500)
    run = _run(path, "acme/records")
    text, _ = identity(run)
    assert len(text) >= runrecord.PACK_FROM
    ids = [_by_records(engine, run), _by_columns(engine, path, "acme/columns")]
    rows = [_row(engine, run_id) for run_id in ids]
    assert [r[0] for r in rows] == ["", ""]
    assert zlib.decompress(rows[0][1] or b"").decode() == text
    assert rows[0][1] != rows[1][1]  # the repository is part of the record
    assert _read(engine, ids[0]) == RunRecord.model_validate_json(text)
    assert _read(engine, ids[1]).model_copy(update={"repo": "acme/records"}) == _read(
        engine, ids[0]
    )
    kernel = _read(engine, ids[1]).kernels[7]
    history = pd.DataFrame({"kernel_key": [kernel.key], "timestamp": [WHEN], "run_id": [ids[1]]})
    with session_scope(engine) as session:
        assert baseline_kernels(session, history, [kernel.key]) == {kernel.key: kernel}


def test_a_small_record_stays_text(engine: sa.Engine, tmp_path: Path) -> None:
    run = _run(write_gbench(tmp_path / "g.json", 20), "acme/small")
    run_id = _by_records(engine, run)
    assert _row(engine, run_id) == (identity(run)[0], None)
    assert _read(engine, run_id) == RunRecord.model_validate_json(identity(run)[0])


def test_the_migration_writes_records_back_as_text_and_goes_up_again(
    engine: sa.Engine, tmp_path: Path
) -> None:
    from alembic import command

    path = write_gbench(tmp_path / "g.json", 1500)
    big, small = _run(path, "acme/big"), _run(write_gbench(tmp_path / "s.json", 5), "acme/small")
    ids = [_by_records(engine, big), _by_records(engine, small)]
    before = [_read(engine, run_id) for run_id in ids]
    with engine.begin() as conn:
        command.downgrade(alembic_config(conn), "0010")
    with engine.connect() as conn:
        stmt = sa.text("SELECT record_json FROM runs ORDER BY id")
        texts = list(conn.execute(stmt).scalars())
    assert texts == [identity(big)[0], identity(small)[0]]
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "head")
    assert current_revision(engine) == HEAD_REVISION == "0017"
    assert [_row(engine, run_id)[1] for run_id in ids] == [None, None]  # old rows: text
    assert [_read(engine, run_id) for run_id in ids] == before


@pytest.mark.parametrize("pack_from", [0, 60, 10**9])
def test_the_writer_gives_back_the_text_written_in_pieces(
    monkeypatch: pytest.MonkeyPatch, pack_from: int
) -> None:
    """Compressed from the piece that reaches ``PACK_FROM`` on, characters of any width."""
    monkeypatch.setattr(runrecord, "PACK_FROM", pack_from)
    text = "".join(f'{{"k":"gemm_{i}_é→µ"}},' for i in range(5_000))
    writer = runrecord.RecordWriter()
    for at in range(0, len(text), 7):
        writer.write(text[at : at + 7])
    stored, packed = writer.stored()
    if pack_from > len(text):
        assert (stored, packed) == (text, None)
    else:
        assert stored == "" and runrecord.record_of(stored, packed) == text.encode()
