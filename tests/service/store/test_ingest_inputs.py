"""``roofguard ingest`` of inputs it stored before answers without reading the files again.

A re-run CI job ingests the same page with the same flags: the digest of the inputs
(``service.pipeline.inputdigest``) finds the run (``ingest_inputs``, migration 0013). Any
input that can change the stored run (a flag, the config, a byte of a file) reads the files,
as before; what the content hash leaves out (the timestamp) does not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from both_backends import both_backends_engine
from column_files import write_ncu

import service.cli.ingest_cmd as ingest_cmd
import service.pipeline.hugerun as hugerun
import service.pipeline.inputdigest as inputdigest
from service.cli import run
from service.config import RoofguardConfig
from service.pipeline.inputdigest import ingest_digest
from service.pipeline.runmeta import RunMeta
from service.pipeline.storable import StoreLimits
from service.store.db import HEAD_REVISION, core_scope
from service.store.ingest import IngestResult
from service.store.ingestinputs import remember_inputs, run_of_inputs

__all__ = ["both_backends_engine"]

FLAGS = ["--repo", "acme/inputs", "--commit", "c" * 40, "--branch", "main", "--kind", "nightly"]


@pytest.fixture(name="reads")
def _reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often ingest read the reports (the real readers still run).

    ``read_columns`` comes first on every read: it reads a big file or declines a small one.
    """
    counted: Counter[str] = Counter()

    def counting(name: str) -> Callable[..., Any]:
        real = getattr(ingest_cmd, name)

        def read(*args: Any, **kwargs: Any) -> Any:
            counted[name] += 1
            return real(*args, **kwargs)

        return read

    monkeypatch.setattr(ingest_cmd, "read_columns", counting("read_columns"))
    return counted


def _url(engine: sa.Engine) -> str:
    return engine.url.render_as_string(hide_password=False)


def _ingest(engine: sa.Engine, report: Path, *extra: str) -> int:
    flags = [*FLAGS, "--device", "H100-SXM5", "--timestamp", "2026-12-01T03:00:00Z"]
    return run(["ingest", str(report), *flags, *extra, "--db", _url(engine)])


def _runs(engine: sa.Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.text("SELECT count(*) FROM runs")).scalar_one())


@pytest.mark.parametrize("columns", [True, False], ids=["columns", "records"])
def test_the_same_inputs_find_their_run_without_reading_a_file(
    engine: sa.Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reads: Counter[str],
    columns: bool,
) -> None:
    monkeypatch.setattr(hugerun, "COLUMNS_FROM_BYTES", 0 if columns else 2**62)
    report = write_ncu(tmp_path / "page.csv", 300)
    assert _ingest(engine, report) == 0
    assert "ingested run 1 (300 kernels)" in capsys.readouterr().out
    first = sum(reads.values())
    assert _ingest(engine, report) == 0
    assert _ingest(engine, report, "--timestamp", "2026-12-02T03:00:00Z") == 0
    assert capsys.readouterr().out.count("already ingested as run 1 (same content)") == 2
    assert sum(reads.values()) == first  # neither read the page
    assert _runs(engine) == 1


def test_another_flag_or_config_reads_the_files_and_stores_what_they_give(
    engine: sa.Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str], reads: Counter[str]
) -> None:
    report = write_ncu(tmp_path / "page.csv", 40)
    assert _ingest(engine, report) == 0
    config = tmp_path / "roofguard.toml"
    config.write_text("[keys]\ninclude_launch_config = true\n", encoding="utf-8")
    before = sum(reads.values())
    assert _ingest(engine, report, "--commit", "d" * 40) == 0
    assert _ingest(engine, report, "--config", str(config)) == 0
    said = capsys.readouterr().out
    assert "ingested run 2 (40 kernels)" in said and "ingested run 3 (40 kernels)" in said
    assert sum(reads.values()) - before == 2


def test_other_bytes_of_the_same_content_are_read_once_then_remembered(
    engine: sa.Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str], reads: Counter[str]
) -> None:
    report = write_ncu(tmp_path / "page.csv", 40)
    assert _ingest(engine, report) == 0
    twin = tmp_path / "twin.csv"
    twin.write_bytes(report.read_bytes() + b"\n")  # a blank last line: the same run
    before = sum(reads.values())
    assert _ingest(engine, twin) == 0
    assert sum(reads.values()) - before == 1
    assert _ingest(engine, twin) == 0
    assert sum(reads.values()) - before == 1
    assert capsys.readouterr().out.count("already ingested as run 1 (same content)") == 2
    assert _runs(engine) == 1


def test_deleting_the_run_forgets_its_inputs(
    engine: sa.Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = write_ncu(tmp_path / "page.csv", 40)
    assert _ingest(engine, report) == 0
    with core_scope(engine) as session:  # SQLite enforces the cascade on the store's engine
        session.execute(sa.text("DELETE FROM measurements"))
        session.execute(sa.text("DELETE FROM runs"))
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM ingest_inputs")).scalar_one() == 0
    assert _ingest(engine, report) == 0
    said = capsys.readouterr().out.splitlines()
    assert said[-1].startswith("ingested run") and _runs(engine) == 1


def test_a_digest_kept_twice_stays_with_its_first_run(engine: sa.Engine, tmp_path: Path) -> None:
    """Two ingests of the same inputs at once: the second one's digest is not an error."""
    report = write_ncu(tmp_path / "page.csv", 40)
    assert _ingest(engine, report) == 0
    with core_scope(engine) as session:
        stored = session.execute(sa.text("SELECT id, content_hash FROM runs")).one()
        result = IngestResult(stored.id, False, stored.content_hash, 40)
        remember_inputs(session, "f" * 64, result)
        remember_inputs(session, "f" * 64, result)
        assert run_of_inputs(session, "f" * 64) == 1
        assert run_of_inputs(session, "0" * 64) is None


def test_a_store_behind_its_migrations_is_still_refused_after_the_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], reads: Counter[str]
) -> None:
    db = tmp_path / "h.db"
    assert run(["db", "upgrade", "--db", f"sqlite:///{db}"]) == 0
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE ingest_inputs"))
        conn.execute(sa.text("UPDATE alembic_version SET version_num = '0012'"))
    assert _ingest(engine, write_ncu(tmp_path / "page.csv", 40)) != 0
    engine.dispose()
    assert f"needs {HEAD_REVISION}; run `roofguard db upgrade`" in capsys.readouterr().err
    assert sum(reads.values()) == 1


def test_the_digest_covers_what_makes_the_run_and_not_the_timestamp(tmp_path: Path) -> None:
    one, two = write_ncu(tmp_path / "a.csv", 5), write_ncu(tmp_path / "b.csv", 5, seed=2)
    meta = RunMeta(repo="acme/k", commit="c" * 40)
    config, limits = RoofguardConfig(), StoreLimits()

    def digest(files: list[Path], **change: Any) -> str | None:
        kinds = {"meta": meta, "config": config, "limits": limits} | change
        return ingest_digest(files, **kinds)

    same = digest([one, two])
    assert same is not None
    assert digest([one, two], meta=meta.model_copy(update={"timestamp": "2026-01-01"})) == same
    changed = [
        digest([two, one]),
        digest([one]),
        digest([one, two], meta=meta.model_copy(update={"branch": "dev"})),
        digest([one, two], config=RoofguardConfig(device="A100-SXM4-80GB")),
        digest([one, two], limits=StoreLimits(max_kernels=10)),
    ]
    assert None not in changed and len({same, *changed}) == len(changed) + 1
    assert digest([one, tmp_path]) is None and digest([tmp_path / "missing.csv"]) is None


def test_the_default_store_is_looked_up_without_being_made(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reads: Counter[str],
) -> None:
    """A bad page leaves no store folder behind; a good one's second ingest reads nothing."""
    monkeypatch.chdir(tmp_path)
    flags = [*FLAGS, "--device", "H100-SXM5"]
    bad = tmp_path / "bad.csv"
    bad.write_text("not a report\n", encoding="utf-8")
    assert run(["ingest", str(bad), *flags]) == 2
    assert not (tmp_path / ".roofguard").exists()
    page = write_ncu(tmp_path / "page.csv", 40)
    assert run(["ingest", str(page), *flags]) == 0
    assert run(["ingest", str(page), *flags]) == 0
    assert "already ingested as run 1 (same content)" in capsys.readouterr().out
    assert reads["read_columns"] == 2  # the bad page and the first ingest of the good one


def test_a_future_timestamp_is_refused_before_the_digest_answers(
    engine: sa.Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The timestamp is no part of the digest; a read refuses a future one, so must this."""
    report = write_ncu(tmp_path / "page.csv", 40)
    assert _ingest(engine, report) == 0
    assert _ingest(engine, report, "--timestamp", "2099-01-01T00:00:00Z") == 2
    assert "--timestamp: 2099-01-01T00:00:00+00:00 is" in capsys.readouterr().err


def test_a_file_rewritten_while_it_is_read_leaves_no_digest(
    engine: sa.Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reads: Counter[str]
) -> None:
    """The digest of one version must not name the run read from the next one."""
    report = write_ncu(tmp_path / "page.csv", 40, seed=1)
    first = report.read_bytes()
    other = write_ncu(tmp_path / "other.csv", 40, seed=2).read_bytes()
    reading = ingest_cmd.read_columns

    def rewritten_first(*args: Any, **kwargs: Any) -> Any:
        swap = tmp_path / "swap.csv"
        swap.write_bytes(other)
        swap.replace(report)  # as a writer replaces a file, between the digest and the read
        return reading(*args, **kwargs)

    monkeypatch.setattr(ingest_cmd, "read_columns", rewritten_first)
    assert _ingest(engine, report) == 0  # the run of the other bytes
    monkeypatch.setattr(ingest_cmd, "read_columns", reading)
    report.write_bytes(first)
    assert _ingest(engine, report) == 0
    assert _runs(engine) == 2, "the first bytes were answered with the other bytes' run"


def test_a_run_deleted_without_its_digest_is_not_answered_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SQLite's shell deletes without foreign keys, and the next run takes the id."""
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'h.db'}")
    assert run(["db", "upgrade", "--db", str(engine.url)]) == 0
    one, two = write_ncu(tmp_path / "one.csv", 40), write_ncu(tmp_path / "two.csv", 30, seed=2)
    assert _ingest(engine, one) == 0
    with engine.begin() as conn:  # a plain connection: foreign keys off, as in sqlite3
        conn.execute(sa.text("DELETE FROM measurements"))
        conn.execute(sa.text("DELETE FROM runs"))
    assert _ingest(engine, two) == 0
    assert _ingest(engine, one) == 0
    engine.dispose()
    said = capsys.readouterr().out.splitlines()[-3:]
    # run 1 again for the second page (the id reused), and the first page read and stored
    assert [line.split(" (")[0] for line in said] == [f"ingested run {n}" for n in (1, 1, 2)]


def test_a_broken_store_still_lets_the_reader_name_a_bad_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "h.db"
    db.write_bytes(bytes(range(256)) * 16)  # not a database
    bad = tmp_path / "bad.csv"
    bad.write_text("not a report\n", encoding="utf-8")
    assert run(["ingest", str(bad), *FLAGS, "--db", f"sqlite:///{db}"]) == 2
    assert str(bad) in capsys.readouterr().err


def test_roofguards_own_files_and_reading_libraries_are_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout's edit, or a release that kept its version number, reads the files again."""
    page = write_ncu(tmp_path / "page.csv", 5)
    kinds = {"meta": RunMeta(repo="acme/k", commit="c"), "config": RoofguardConfig()}

    def digest() -> str | None:
        inputdigest._code_digest.cache_clear()
        found = ingest_digest([page], **kinds, limits=StoreLimits())
        return None if found is None else found.hexdigest

    before = digest()
    files = list(inputdigest._own_files())
    edited = [*files[:-1], (files[-1][0], files[-1][1] + b"\n# edited")]
    monkeypatch.setattr(inputdigest, "_own_files", lambda: iter(edited))
    after_edit = digest()
    monkeypatch.setattr(inputdigest, "_version", lambda library: "9.9")
    after_upgrade = digest()
    monkeypatch.undo()
    assert len({before, after_edit, after_upgrade}) == 3 and digest() == before
