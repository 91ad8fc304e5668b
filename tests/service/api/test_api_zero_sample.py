"""A sample of 0 s among a kernel's others is refused by every door, naming entry and field.

The collectors refuse a 0 s launch or repetition among others (no timer measures under
1e-12 s); a RunRecord uploaded as JSON checked ``duration_s`` alone, so a run with
``"samples_s": [0.001, 0.0]`` was stored and judged with the 0 s sample in its spread.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from factories import make_kernel, make_run
from svc_helpers import Service, auth

from service.cli import run

NEVER = "duration of 0.0 s for a sample: no timer measures under 1e-12 s"


def _body(repo: str, sample: float) -> dict[str, Any]:
    kernels = [make_kernel(name) for name in ("a", "b", "c", "d")]
    body = json.loads(make_run(repo=repo, kernels=kernels).model_dump_json())
    seconds = body["kernels"][3]["duration_s"]
    body["kernels"][3].update(launches=2, duration_s=seconds, samples_s=[seconds / 2, sample])
    return body


def _post(service: Service, repo: str, body: dict[str, Any]) -> Any:
    headers = {**auth(service.token(repo)), "Content-Type": "application/json"}
    return service.client.post("/api/v1/runs", content=json.dumps(body), headers=headers)


def test_an_upload_with_a_zero_sample_is_a_422_naming_it(service: Service, repo: str) -> None:
    answer = _post(service, repo, _body(repo, 0.0))
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"] == f"request body: kernels.3.samples_s.1: Value error, {NEVER}"


def test_an_upload_with_measured_samples_is_stored(service: Service, repo: str) -> None:
    body = _body(repo, 0.0)
    body["kernels"][3]["samples_s"][1] = body["kernels"][3]["samples_s"][0]
    assert _post(service, repo, body).status_code == 201


@pytest.mark.parametrize("command", ["check", "ingest"])
def test_a_record_file_with_a_zero_sample_is_exit_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_body("o/r", 0.0)))
    argv = [command, str(path), "--repo", "o/r", "--commit", "c1", "--branch", "main"]
    assert run([*argv, "--db", f"sqlite:///{tmp_path}/h.db"]) == 2
    err = capsys.readouterr().err
    assert f"{path}, row kernels[3], field 'samples_s.1': Value error, {NEVER}" in err, err
