"""An upload of a RunRecord version this roofguard does not read is a 422 naming the field.

A JSON body or a roofguard JSON file with ``"schema_version": 99`` or ``-5`` was stored and
judged as version 1.
"""

from __future__ import annotations

import json

import pytest
from factories import make_run
from svc_helpers import Service, auth

NEWER = "; upgrade roofguard to read a newer one"


def _body(repo: str, **changes: object) -> bytes:
    return json.dumps(json.loads(make_run(repo=repo).model_dump_json()) | changes).encode()


def _runs(service: Service, repo: str) -> int:
    answer = service.client.get(f"/api/v1/runs?repo={repo}", headers=auth(service.token(repo)))
    return int(answer.json()["count"])


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        (
            {"schema_version": 99},
            "version 99: this roofguard reads RunRecord version 1 only" + NEWER,
        ),
        ({"schema_version": 2, "kernels": {"by_key": {}}}, "version 2: this roofguard reads"),
        ({"schema_version": -5}, "version -5: this roofguard reads RunRecord version 1 only"),
    ],
)
def test_a_json_body_of_another_version_is_a_422(
    service: Service, repo: str, changes: dict[str, object], reason: str
) -> None:
    headers = auth(service.token(repo)) | {"Content-Type": "application/json"}
    answer = service.client.post("/api/v1/runs", content=_body(repo, **changes), headers=headers)
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"].startswith(f"request body: schema_version: {reason}")
    assert _runs(service, repo) == 0


def test_a_form_file_of_another_version_is_a_422_naming_it(service: Service, repo: str) -> None:
    data = {"repo": repo, "commit": "abc", "kind": "nightly", "branch": "main"}
    files = [("files", ("ci/run.json", _body(repo, schema_version=99), "application/json"))]
    headers = auth(service.token(repo))
    answer = service.client.post("/api/v1/runs", data=data, files=files, headers=headers)
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert detail == "run.json, field 'schema_version': version 99: this roofguard reads " + (
        "RunRecord version 1 only" + NEWER
    )
    assert _runs(service, repo) == 0


def test_version_1_is_stored(service: Service, repo: str) -> None:
    headers = auth(service.token(repo)) | {"Content-Type": "application/json"}
    body = _body(repo, schema_version=1)
    assert service.client.post("/api/v1/runs", content=body, headers=headers).status_code == 201
