"""A RunRecord uploaded as JSON is read as a roofguard JSON file is: its JSON types strictly.

``"duration_s": true`` was stored as a 1 s kernel and ``"0.001"`` as 1 ms, where the same
record in a file was refused naming the entry and the field; and a kernel with no measured
launch vanished from the verdict without the note every file reader gives it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlalchemy as sa
from factories import make_kernel, make_run
from svc_helpers import Service, auth

from collectors import KernelRecord
from service.store.tables import Repository, Run


def _post(service: Service, repo: str, body: dict[str, Any]) -> Any:
    headers = {**auth(service.token(repo)), "Content-Type": "application/json"}
    return service.client.post("/api/v1/runs", content=json.dumps(body), headers=headers)


def _runs_stored(service: Service, repo: str) -> int:
    runs, repos = Run.__table__, Repository.__table__
    stmt = sa.select(sa.func.count()).select_from(runs.join(repos, repos.c.id == runs.c.repo_id))
    with service.engine.connect() as conn:
        return int(conn.execute(stmt.where(repos.c.name == repo)).scalar_one())


@pytest.mark.parametrize(
    ("field", "value", "found"),
    [
        ("duration_s", True, "Input should be a valid number, got true"),
        ("duration_s", "0.001", "Input should be a valid number, got the string '0.001'"),
        ("launches", 3.0, "Input should be a valid integer, got 3.0"),
        ("launches", "3", "Input should be a valid integer, got the string '3'"),
    ],
)
def test_a_value_of_the_wrong_json_type_is_a_422_naming_the_kernel_and_field(
    service: Service, repo: str, field: str, value: object, found: str
) -> None:
    body = json.loads(
        make_run(repo=repo, kernels=[make_kernel("a"), make_kernel("b")]).model_dump_json()
    )
    body["kernels"][1][field] = value
    answer = _post(service, repo, body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"] == f"request body: kernels.1.{field}: {found}"
    assert _runs_stored(service, repo) == 0


def test_an_integer_is_still_a_number(service: Service, repo: str) -> None:
    body = json.loads(make_run(repo=repo).model_dump_json())
    body["kernels"][0]["duration_s"] = 1
    assert _post(service, repo, body).status_code == 201


def test_a_kernel_never_measured_is_named_in_the_verdicts_notes(
    service: Service, repo: str
) -> None:
    idle = KernelRecord(name="idle_kernel", key="idle_kernel", launches=0, duration_s=0.0)
    run = make_run(repo=repo, kernels=[make_kernel("gemv"), idle])
    answer = _post(service, repo, json.loads(run.model_dump_json()))
    assert answer.status_code == 201, answer.text
    notes = answer.json()["verdict"]["notes"]
    assert "not measured, no launch with a duration: idle_kernel" in notes, notes
