"""``POST /api/v1/runs?answer=brief``: the run's id, url and conclusion, not its verdict.

A fleet's uploaders that store nightly runs read nothing of a 2,000-kernel verdict (1-2 MB
of JSON): parsing it cost the load test's clients 0.056 CPU s an upload, as much again as
PostgreSQL's share of storing it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import jsonschema_rs
from factories import make_kernel, make_run
from svc_helpers import auth

BRIEF = {"run_id", "created", "url", "posted", "post_detail", "conclusion"}


def _upload(service, run, token: str, answer: str | None):
    params = {"answer": answer} if answer else {}
    headers = {**auth(token), "Content-Type": "application/json"}
    body = run.model_dump_json()
    return service.client.post("/api/v1/runs", content=body, headers=headers, params=params)


def test_a_brief_answer_names_the_run_and_the_conclusion(service, repo) -> None:
    when = datetime(2026, 11, 30, 2, tzinfo=UTC)
    kernels = [make_kernel("gemv", time_s=1e-3), make_kernel("gemm", time_s=2e-3)]
    night = make_run(repo=repo, commit="b1", timestamp=when, kernels=kernels)
    token = service.token(repo)
    first = _upload(service, night, token, "brief")
    assert first.status_code == 201, first.text
    brief = first.json()
    assert set(brief) == BRIEF and brief["created"] is True
    full = _upload(service, night, token, None)  # the same run again: its stored answer
    assert full.status_code == 200
    assert full.json()["run_id"] == brief["run_id"]
    assert full.json()["verdict"]["conclusion"] == brief["conclusion"]
    again = _upload(service, night, token, "brief")  # read off the stored answer
    assert again.status_code == 200
    assert again.json() == {**brief, "created": False}
    assert len(again.content) < 400
    for answer in (first, full, again):  # the OpenAPI document said every answer was full
        _documented(service, answer.status_code).validate(answer.json())


def _documented(service, status: int) -> Any:
    """A validator of the upload's answer with ``status`` as the OpenAPI document states it."""
    doc = service.app.openapi()
    answer = doc["paths"]["/api/v1/runs"]["post"]["responses"][str(status)]
    schema = {**answer["content"]["application/json"]["schema"], "components": doc["components"]}
    return jsonschema_rs.validator_for(schema)


def test_another_answer_kind_is_refused(service, repo) -> None:
    night = make_run(repo=repo, commit="b2", timestamp=datetime(2026, 11, 30, 3, tzinfo=UTC))
    answer = _upload(service, night, service.token(repo), "short")
    assert answer.status_code == 422 and "answer" in answer.text
