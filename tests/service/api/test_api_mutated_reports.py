"""Mutated reports end to end: the CLI exits 2 with one line, an upload is a 422 storing nothing.

The files are issue 31's four (``tests/collectors/mutated.py``): an integer of 5,000 digits,
one beyond a float, a CSV field over the csv module's limit, a markdown table cut in a row.
Each was roofguard's internal-error message ("this is a roofguard bug") before.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from factories import make_run
from svc_helpers import Service, auth

from service.cli import run
from service.store.tables import Repository, Run
from tests.collectors.mutated import CASES

ROOT = Path(__file__).resolve().parents[3]


def _where(path: Path | str, case: str) -> str:
    """How the error line starts: the file, the line or entry, the field."""
    _, row, field, _ = CASES[case]
    return f"{path}, row {row}" + (f", field {field!r}" if field else "") + ": "


def _runs_stored(service: Service, repo: str) -> int:
    runs, repos = Run.__table__, Repository.__table__
    stmt = sa.select(sa.func.count()).select_from(runs.join(repos, repos.c.id == runs.c.repo_id))
    with service.engine.connect() as conn:
        return int(conn.execute(stmt.where(repos.c.name == repo)).scalar_one())


@pytest.mark.parametrize("case", sorted(CASES))
def test_inspect_exits_2_with_one_line_naming_file_place_and_fault(
    case: str, corpus_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = CASES[case].write(corpus_dir, tmp_path)
    assert run(["inspect", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.strip().splitlines()
    assert line.startswith(f"roofguard: error: {_where(path, case)}"), line
    assert CASES[case].words in line and "roofguard bug" not in line
    assert len(line) < 400, line


def test_the_console_entry_point_exits_2_with_that_line(corpus_dir: Path, tmp_path: Path) -> None:
    path = CASES["5000-digit integer"].write(corpus_dir, tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "service", "inspect", str(path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        f"roofguard: error: {_where(path, '5000-digit integer')}"
        "an integer of 5,000 digits; roofguard reads integers of at most 4,300 digits"
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_upload_is_a_422_naming_the_file_and_stores_nothing(
    case: str, service: Service, repo: str, corpus_dir: Path, tmp_path: Path
) -> None:
    path = CASES[case].write(corpus_dir, tmp_path)
    form = {"repo": repo, "commit": "5eed", "kind": "nightly"}
    files = [("files", (path.name, path.read_bytes(), "application/octet-stream"))]
    answer = service.client.post(
        "/api/v1/runs", headers=auth(service.token(repo)), data=form, files=files
    )
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert detail.startswith(_where(path.name, case)), detail  # the name as uploaded
    assert CASES[case].words in detail and "roofguard bug" not in detail
    assert _runs_stored(service, repo) == 0


def test_an_uploaded_count_past_the_stores_integers_is_a_422(service: Service, repo: str) -> None:
    # the database refused it (a 500 and a traceback); the record refuses it by name
    body = make_run(repo=repo).model_dump_json().replace('"launches":1', f'"launches":{10**30}')
    headers = {**auth(service.token(repo)), "Content-Type": "application/json"}
    answer = service.client.post("/api/v1/runs", content=body, headers=headers)
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"].startswith("request body: kernels.0.launches: ")
    assert _runs_stored(service, repo) == 0
