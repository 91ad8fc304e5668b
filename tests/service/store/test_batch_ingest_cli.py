"""``roofguard ingest`` of one big file takes the column path and stores the same run.

The size from which a file is read as columns (``hugerun.COLUMNS_FROM_BYTES``) is set to 0
here, so small files take it; stored the other way round, the run must be the same: its
content hash, record and measurement rows. Bad input still fails with the record path's
message, which names the file, entry and field.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from column_files import write_gbench, write_ncu

import service.pipeline.hugerun as hugerun
from service.cli import run
from service.config import RoofguardConfig
from service.pipeline.runmeta import RunMeta

ARGS = ["--repo", "acme/kernels", "--commit", "c" * 40, "--branch", "main", "--kind", "nightly"]


def _ingest(report: Path, db: Path, *, columns: bool, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(hugerun, "COLUMNS_FROM_BYTES", 0 if columns else 2**62)
    args = ["ingest", str(report), *ARGS, "--timestamp", "2026-12-01T03:00:00Z"]
    if report.suffix == ".csv":  # the page names no device
        args += ["--device", "H100-SXM5"]
    return run([*args, "--db", f"sqlite:///{db}"])


def _stored(db: Path) -> tuple[object, ...]:
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.connect() as conn:
        run_row = conn.execute(sa.text("SELECT content_hash, record_json FROM runs")).one()
        rows = conn.execute(
            sa.text(
                "SELECT k.key, k.name, m.time_s, m.flops_json, m.total_flops, m.bytes_dram,"
                " m.bytes_l2, m.percent_of_roof, m.regime, m.binding, m.borderline,"
                " m.intensity_dram, m.t_roof_s, m.peak_flop_time_s, m.roof_source"
                " FROM measurements m JOIN kernels k ON k.id = m.kernel_id ORDER BY k.key"
            )
        ).all()
    engine.dispose()
    return tuple(run_row), [tuple(r) for r in rows]


@pytest.mark.parametrize("writer", [write_gbench, write_ncu])
def test_ingest_by_columns_stores_the_records_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writer: object
) -> None:
    suffix = ".json" if writer is write_gbench else ".csv"
    report = writer(tmp_path / f"run{suffix}", 400)  # type: ignore[operator]
    meta = RunMeta(repo="acme/kernels", commit="c" * 40, branch="main", device="H100-SXM5")
    assert hugerun.read_columns([report], meta=meta, config=RoofguardConfig(), from_bytes=0)
    assert _ingest(report, tmp_path / "columns.db", columns=True, monkeypatch=monkeypatch) == 0
    assert _ingest(report, tmp_path / "records.db", columns=False, monkeypatch=monkeypatch) == 0
    assert _stored(tmp_path / "columns.db") == _stored(tmp_path / "records.db")


@pytest.mark.parametrize("ending", [b"\n\n", b"\r\n", b""], ids=["blank lines", "CRLF", "none"])
def test_how_a_page_ends_keeps_the_column_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ending: bytes
) -> None:
    """A million-launch page ending in a blank line was read as records: 144 s against 19 s.

    So was one without a final newline. The run stored is the one the plain page gives.
    """
    report = write_ncu(tmp_path / "run.csv", 400, gap_every=50)
    (tmp_path / "closed").mkdir()
    closed = tmp_path / "closed" / "run.csv"  # the same name: the record keeps it
    closed.write_bytes(report.read_bytes().rstrip(b"\n") + ending)
    meta = RunMeta(repo="acme/kernels", commit="c" * 40, branch="main", device="H100-SXM5")
    assert hugerun.read_columns([closed], meta=meta, config=RoofguardConfig(), from_bytes=0)
    assert _ingest(closed, tmp_path / "closed.db", columns=True, monkeypatch=monkeypatch) == 0
    assert _ingest(report, tmp_path / "plain.db", columns=True, monkeypatch=monkeypatch) == 0
    assert _stored(tmp_path / "closed.db") == _stored(tmp_path / "plain.db")


def test_failed_launches_keep_the_column_path_and_are_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One failed replay among a huge run's launches sent the file to the record path."""
    report = write_ncu(tmp_path / "run.csv", 400, gap_every=50)
    meta = RunMeta(repo="acme/kernels", commit="c" * 40, branch="main", device="H100-SXM5")
    assert hugerun.read_columns([report], meta=meta, config=RoofguardConfig(), from_bytes=0)
    said = []
    for columns in (True, False):
        db = tmp_path / f"{columns}.db"
        assert _ingest(report, db, columns=columns, monkeypatch=monkeypatch) == 0
        said.append(capsys.readouterr())
    assert said[0] == said[1]
    assert "(400 kernels; 6 not measured, not stored)" in said[0].out
    assert "note: 6 of 400 launches failed or had no duration" in said[0].err
    assert _stored(tmp_path / "True.db") == _stored(tmp_path / "False.db")


def test_bad_input_names_the_entry_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    report = write_gbench(tmp_path / "run.json", 30)
    text = report.read_text().replace('"real_time": ', '"real_time": -', 1)
    report.write_text(text)
    assert _ingest(report, tmp_path / "h.db", columns=True, monkeypatch=monkeypatch) == 2
    err = capsys.readouterr().err
    assert "run.json" in err and "benchmarks[0]" in err and "real_time" in err, err
