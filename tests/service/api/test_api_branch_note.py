"""An upload judged against a misspelt ``base_branch`` names the branches that hold runs.

The upload answered "no baseline yet", as for a repository's first run, and its page said
the same: nothing named the branch searched. On SQLite and on PostgreSQL.
"""

from __future__ import annotations

from typing import Any

from factories import make_kernel
from svc_helpers import Service, auth, nightly_run, pr_run

NIGHTS = 5


def _upload(service: Service, token: str, body: str, **query: str) -> Any:
    headers = {**auth(token), "Content-Type": "application/json"}
    answer = service.client.post("/api/v1/runs", params=query, content=body, headers=headers)
    assert answer.status_code == 201, answer.text
    return answer.json()


def test_an_upload_against_a_misspelt_branch_names_those_holding_runs(
    service: Service, repo: str
) -> None:
    token = service.token(repo)
    for night in range(NIGHTS):
        run = nightly_run(repo, night, [make_kernel("gemm", time_s=1e-3)])
        _upload(service, token, run.model_dump_json())
    body = pr_run(repo, [make_kernel("gemm", time_s=1e-3)]).model_dump_json()
    answer = _upload(service, token, body, base_branch="mian")
    verdict = answer["verdict"]
    note = (
        "no nightly or local run of base branch 'mian' is stored on H100-SXM5; "
        f"this repository's are on main ({NIGHTS})"
    )
    assert verdict["baseline"]["runs"] == 0 and note in verdict["notes"]
    page = service.client.get(f"/api/v1/runs/{answer['run_id']}/verdict", headers=auth(token))
    assert note in page.json()["verdict"]["notes"], "its page says the same"
    on_main = _upload(service, token, body.replace("badc0de", "badc0df"))
    assert not [n for n in on_main["verdict"]["notes"] if "base branch 'mian'" in n]
