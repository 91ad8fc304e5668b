"""The same upload twice stores one run and answers with the first run's id (issue 14.2).

With a real report that carries no timestamp (an ncu CSV from the corpus), so each attempt
is read at another moment, into another temporary folder of the service.
"""

from __future__ import annotations

import json

from svc_helpers import Service, auth, start_live

from service.cli import run
from service.store.db import session_scope
from service.store.queries import list_runs

REPORT = "ncu-csv/meinie0826_Roofline-Analysis__torch_sdpa_flash__gqa_bf16_b32_ctx8k_p64.ncu.csv"


def _runs(service: Service, repo: str) -> list[int]:
    with session_scope(service.engine, readonly=True) as session:
        return [r.id for r in list_runs(session=session, repo=repo)]


def test_the_same_multipart_upload_twice_stores_one_run(service, repo, corpus_dir) -> None:
    body = (corpus_dir / REPORT).read_bytes()
    form = {"repo": repo, "commit": "abc1234", "branch": "main", "kind": "nightly"}
    answers = [
        service.client.post(
            "/api/v1/runs",
            headers=auth(service.token(repo)),
            data=form,
            files=[("files", (name, body, "text/csv"))],
        )
        for name in ("profile.csv", "profile.csv", "a-copy-of-it.csv")
    ]
    assert [a.status_code for a in answers] == [201, 200, 200], answers[-1].text
    first = answers[0].json()["run_id"]
    assert [a.json()["run_id"] for a in answers] == [first] * 3
    assert [a.json()["created"] for a in answers] == [True, False, False]
    assert _runs(service, repo) == [first]
    stored = service.client.get(f"/api/v1/runs/{first}/verdict", headers=auth(service.token(repo)))
    assert "roofguard-upload" not in stored.text


def test_roofguard_upload_retried_stores_one_run(service, repo, corpus_dir, tmp_path) -> None:
    live = start_live(service.app)
    token = service.token(repo)
    try:
        ids = []
        for attempt in range(2):
            out = tmp_path / f"verdict{attempt}.json"
            args = ["upload", str(corpus_dir / REPORT), "--server", live.url, "--token", token]
            args += ["--repo", repo, "--commit", "abc1234", "--kind", "nightly"]
            assert run([*args, "--format", "json", "--output", str(out)]) == 0
            ids.append(json.loads(out.read_text())["run_id"])
    finally:
        live.stop()
    assert ids[0] == ids[1] and _runs(service, repo) == [ids[0]]
