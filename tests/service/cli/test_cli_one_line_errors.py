"""Mistakes a CI script makes get one line naming what is wrong, exit 2, nothing stored.

Each of these read otherwise before: a traceback's last line ("unexpected
FileNotFoundError", "unexpected NoSuchModuleError"), an error without its file, a run
stored under an empty commit, or an empty table with exit 0.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from factories import make_kernel, make_run

from service.cli import run

PYTEST_BENCHMARK = "pytest-benchmark/benchmark-action_github-action-benchmark__pytest_output.json"


def _report(tmp_path: Path) -> Path:
    path = tmp_path / "run.json"
    path.write_text(make_run(kernels=[make_kernel("gemv", time_s=1e-3)]).model_dump_json())
    return path


def _ingest(report: Path, db: str, *extra: str) -> list[str]:
    return ["ingest", str(report), "--repo", "acme/k", "--branch", "main", "--db", db, *extra]


def _error(capsys, argv: list[str]) -> str:
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unexpected" not in err and "Traceback" not in err
    return err


def test_a_missing_report_is_named(tmp_path, capsys) -> None:
    db = f"sqlite:///{tmp_path / 'h.db'}"
    err = _error(capsys, _ingest(tmp_path / "nope.csv", db, "--commit", "c1"))
    assert f"{tmp_path / 'nope.csv'}: cannot read file" in err


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("bogus://x", "'bogus://x'"),
        ("postgres+psycopg://u:secret@h/db", "u:***@h/db"),
        ("x", "'x'"),
    ],
)
def test_a_database_url_no_driver_opens_is_named_without_its_password(
    tmp_path, capsys, url: str, shown: str
) -> None:
    err = _error(capsys, _ingest(_report(tmp_path), url, "--commit", "c1"))
    assert "is not one roofguard can open" in err and shown in err and "secret" not in err


def test_an_empty_commit_is_refused_and_nothing_stored(tmp_path, capsys) -> None:
    """An unset $GITHUB_SHA: the run was stored under commit ''."""
    db = f"sqlite:///{tmp_path / 'h.db'}"
    err = _error(capsys, _ingest(_report(tmp_path), db, "--commit", ""))
    assert "--commit: empty" in err
    if (tmp_path / "h.db").exists():  # opened before the run's meta was read: no run in it
        with sqlite3.connect(tmp_path / "h.db") as store:
            assert store.execute("select count(*) from runs").fetchone() == (0,)


def test_an_empty_branch_is_refused_and_nothing_stored(tmp_path, capsys) -> None:
    """An unset $GITHUB_HEAD_REF: stored under branch '', where an upload stores it on main."""
    db = tmp_path / "h.db"
    argv = ["ingest", str(_report(tmp_path)), "--repo", "acme/k", "--branch", " "]
    err = _error(capsys, [*argv, "--commit", "c1", "--db", f"sqlite:///{db}"])
    assert "--branch: empty" in err
    assert _stored_runs(db) == 0


@pytest.mark.corpus
def test_a_report_on_an_unknown_device_names_the_file(tmp_path, capsys, corpus_dir) -> None:
    report = corpus_dir / PYTEST_BENCHMARK
    db = f"sqlite:///{tmp_path / 'h.db'}"
    err = _error(capsys, ["check", str(report), "--repo", "acme/k", "--commit", "c1", "--db", db])
    assert err.startswith(f"roofguard: error: {report}: unknown device 'Intel(R) Core(TM)")


def test_compare_of_a_repository_with_no_history_or_no_such_kernel(tmp_path, capsys) -> None:
    db = f"sqlite:///{tmp_path / 'h.db'}"
    assert run([*_ingest(_report(tmp_path), db, "--commit", "c1"), "--kind", "nightly"]) == 0
    capsys.readouterr()  # the ingest's note: its report names another repository
    err = _error(capsys, ["compare", "--repo", "acme/typo", "--db", db])
    assert "--repo: acme/typo has no base-branch run in the history store" in err
    err = _error(capsys, ["compare", "--repo", "acme/k", "--db", db, "--kernel", "gemm"])
    assert "--kernel: 'gemm' matches no kernel of acme/k" in err
    err = _error(capsys, ["compare", "--repo", "acme/k", "--db", db, "--roof", "measured"])
    assert "--roof measured: none of acme/k's 1 base-branch runs was placed on a measured" in err
    assert "roofguard calibrate --store" in err  # not "no base-branch run": there is one


@pytest.mark.parametrize(
    "argv",
    [
        ["digest", "--repo", "acme/k"],
        ["compare", "--repo", "acme/k"],
        ["plot", "kernel", "gemv", "--repo", "acme/k"],
        ["plot", "run", "1"],
        ["token", "list"],
        ["db", "current"],
    ],
    ids=["digest", "compare", "plot-kernel", "plot-run", "token", "db-current"],
)
def test_a_mistyped_store_path_is_named_not_created(tmp_path, capsys, argv: list[str]) -> None:
    """A weekly digest job with a typo in --db read 'nothing to digest' from a new empty store."""
    typo = tmp_path / "sub" / "histroy.db"
    err = _error(capsys, [*argv, "--db", f"sqlite:///{typo}"])
    assert f"--db: no history store at {typo}" in err
    assert not typo.parent.exists()


def _gbench(path: Path, benchmarks: list[dict]) -> Path:
    context = {"date": "2026-11-30T02:00:00+00:00", "library_build_type": "release"}
    path.write_text(json.dumps({"context": context, "benchmarks": benchmarks}))
    return path


def _stored_runs(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM runs").fetchone()[0])


LOST_GPU = "CUDA error: no CUDA-capable device is detected"


@pytest.mark.parametrize("command", ["ingest", "check"])
def test_a_report_whose_every_benchmark_errored_is_refused(tmp_path, capsys, command) -> None:
    """A runner that lost its GPU: stored, it was a run of none that passed every check."""
    errored = [
        {"name": f"BM_gemv/{n}", "error_occurred": True, "error_message": LOST_GPU}
        for n in (64, 128)
    ]
    report = _gbench(tmp_path / "bench.json", errored)
    db = tmp_path / "h.db"
    argv = _ingest(report, f"sqlite:///{db}", "--commit", "c1", "--device", "H100-SXM5")
    err = _error(capsys, [command, *argv[1:]])
    assert f"{report}: no measured kernel, nothing to store or judge" in err
    assert "2 note(s), the first: benchmark BM_gemv/64 not ingested" in err and LOST_GPU in err
    assert _stored_runs(db) == 0


def test_a_report_of_no_benchmark_is_refused(tmp_path, capsys) -> None:
    report = _gbench(tmp_path / "bench.json", [])
    db = tmp_path / "h.db"
    err = _error(capsys, _ingest(report, f"sqlite:///{db}", "--commit", "c1", "--device", "L4"))
    assert f"{report}: no measured kernel, nothing to store or judge (it holds no result)" in err
    assert _stored_runs(db) == 0


@pytest.mark.parametrize("command", ["ingest", "check"])
@pytest.mark.parametrize(("flag", "value"), [("--runner", "r" * 300), ("--commit", "c" * 65)])
def test_a_flag_too_long_for_the_store_is_named(tmp_path, capsys, command, flag, value) -> None:
    """The error named the report file, as if the file held the runner's name."""
    db = tmp_path / "h.db"
    argv = ["--repo", "acme/k", "--branch", "main", "--db", f"sqlite:///{db}"]
    commit = [] if flag == "--commit" else ["--commit", "c1"]
    err = _error(capsys, [command, str(_report(tmp_path)), *argv, *commit, flag, value])
    assert f"error: {flag}: {len(value)} characters, at most" in err
    assert _stored_runs(db) == 0


def test_a_timestamp_given_again_says_it_was_not_applied(tmp_path, capsys) -> None:
    """A run's time is not its content: the same run ingested again keeps its first time."""
    report, db = _report(tmp_path), f"sqlite:///{tmp_path / 'h.db'}"
    assert run(_ingest(report, db, "--commit", "c1", "--timestamp", "2026-11-30T02:00")) == 0
    capsys.readouterr()
    assert run(_ingest(report, db, "--commit", "c1", "--timestamp", "2026-12-01T02:00")) == 0
    out, err = capsys.readouterr()
    assert "already ingested as run 1 (same content)" in out
    assert "note: --timestamp not applied: run 1 keeps the time it was stored with" in err


@pytest.mark.parametrize("copy", [False, True], ids=["same files", "same content"])
def test_the_same_timestamp_given_again_is_no_news(tmp_path, capsys, copy) -> None:
    """A nightly job retried said "--timestamp not applied" of the time the run has."""
    report, db = _report(tmp_path), f"sqlite:///{tmp_path / 'h.db'}"
    again = tmp_path / "again" / report.name if copy else report  # read again, the same run
    again.parent.mkdir(exist_ok=True)
    again.write_bytes(report.read_bytes())
    assert run(_ingest(report, db, "--commit", "c1", "--timestamp", "2026-11-30T02:00")) == 0
    capsys.readouterr()
    assert run(_ingest(again, db, "--commit", "c1", "--timestamp", "2026-11-30T02:00Z")) == 0
    out, err = capsys.readouterr()
    assert "already ingested as run 1 (same content)" in out and "not applied" not in err


@pytest.mark.parametrize("flag", ["--output", "--suspects", "--suspects-regex"])
@pytest.mark.parametrize("where", ["missing folder", "a folder"])
def test_an_output_that_cannot_be_written_is_refused_first(tmp_path, capsys, flag, where) -> None:
    """It was an unexpected FileNotFoundError once the run was stored and judged."""
    db = tmp_path / "h.db"
    target = tmp_path / "nodir" / "out.txt" if where == "missing folder" else tmp_path
    argv = ["check", str(_report(tmp_path)), "--repo", "acme/k", "--commit", "c1"]
    err = _error(capsys, [*argv, "--branch", "main", "--db", f"sqlite:///{db}", flag, str(target)])
    reason = "no folder" if where == "missing folder" else "is a folder; give a file name"
    assert f"error: {flag} {target}: {reason}" in err
    assert _stored_runs(db) == 0


def test_a_device_conflict_in_a_run_record_names_its_file(tmp_path, capsys) -> None:
    """A RunRecord has no source of its own: the error read "report: the report names ..."."""
    report = tmp_path / "run.json"
    kernels = [make_kernel("gemv", time_s=1e-3)]
    report.write_text(make_run(kernels=kernels, device="H100-SXM5").model_dump_json())
    db = f"sqlite:///{tmp_path / 'h.db'}"
    err = _error(capsys, _ingest(report, db, "--commit", "c1", "--device", "A100-SXM4-80GB"))
    assert f"error: {report}: the report names device 'H100-SXM5'" in err
