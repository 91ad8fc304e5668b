"""Per-launch samples far from the kernel's time per launch are refused by every door.

``duration_s`` is the total over ``launches`` and each sample one launch's time: a harness
giving its run's time as each of 10 launches' samples had every sample's percent of roof read
10x too low. The flat CSV refused it; a RunRecord JSON file or upload stored and judged it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from factories import make_kernel, make_run
from svc_helpers import Service, auth

from service.cli import run

APART = (
    "duration_s 0.01 s over 10 launch(es) is 0.001 s a launch, more than 2x from its samples "
    "(0.00995 to 0.01005 s, each one launch's time): give each launch's time as a sample, "
    "or launches 1"
)


def _body(repo: str, duration_s: float) -> dict[str, Any]:
    kernels = [make_kernel(name) for name in ("a", "b", "c", "d")]
    body = json.loads(make_run(repo=repo, kernels=kernels).model_dump_json())
    body["kernels"][3].update(launches=10, duration_s=duration_s, samples_s=[0.00995, 0.01005])
    return body


def _post(service: Service, repo: str, body: dict[str, Any]) -> Any:
    headers = {**auth(service.token(repo)), "Content-Type": "application/json"}
    return service.client.post("/api/v1/runs", content=json.dumps(body), headers=headers)


def test_an_upload_whose_samples_are_the_run_s_time_is_a_422_naming_them(
    service: Service, repo: str
) -> None:
    answer = _post(service, repo, _body(repo, 0.01))
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"] == f"request body: kernels.3.samples_s: {APART}"


def test_an_upload_whose_samples_add_up_to_its_duration_is_stored(
    service: Service, repo: str
) -> None:
    assert _post(service, repo, _body(repo, 0.1)).status_code == 201


def test_a_record_file_uploaded_in_a_form_is_a_422_naming_it(service: Service, repo: str) -> None:
    data = {"repo": repo, "commit": "abc", "kind": "nightly", "branch": "main"}
    files = [("files", ("run.json", json.dumps(_body(repo, 0.01)).encode(), "application/json"))]
    headers = auth(service.token(repo))
    answer = service.client.post("/api/v1/runs", headers=headers, data=data, files=files)
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"] == f"run.json, row kernels[3], field 'samples_s': {APART}"


@pytest.mark.parametrize("command", ["check", "ingest"])
def test_a_record_file_whose_samples_are_the_run_s_time_is_exit_2_naming_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_body("o/r", 0.01)))
    argv = [command, str(path), "--repo", "o/r", "--commit", "c1", "--branch", "main"]
    assert run([*argv, "--db", f"sqlite:///{tmp_path}/h.db"]) == 2
    err = capsys.readouterr().err
    assert f"{path}, row kernels[3], field 'samples_s': {APART}" in err, err
    path.write_text(json.dumps(_body("o/r", 0.1)))
    assert run([*argv, "--db", f"sqlite:///{tmp_path}/h.db"]) == 0
