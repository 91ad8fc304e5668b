"""An upload that names no branch: the curl example sent none, and its runs were never counted.

A nightly or local run without a branch joins the base branch's history, with a note in its
verdict; a PR run keeps its branch as given.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from factories import make_kernel, make_run
from svc_helpers import Service, auth

NIGHT = datetime(2026, 11, 1, 3, 0, tzinfo=UTC)
REPORT = Path(__file__).resolve().parents[3] / "service" / "demo" / "data" / "pr-1234.csv"


def _form(service: Service, repo: str, **fields: str) -> dict:
    """``curl -F repo=... -F commit=... -F files=@run.csv``: the README's upload."""
    files = [("files", (REPORT.name, REPORT.read_bytes(), "text/csv"))]
    data = {"repo": repo, "commit": "0123abc", **fields}
    r = service.client.post(
        "/api/v1/runs", headers=auth(service.token(repo)), data=data, files=files
    )
    assert r.status_code == 201, r.text
    return r.json()


def test_a_nightly_without_a_branch_joins_the_base_branch_with_a_note(
    service: Service, repo: str
) -> None:
    answer = _form(service, repo, kind="nightly")
    (note,) = [n for n in answer["verdict"]["notes"] if "no branch given" in n]
    assert "'main'" in note
    runs = service.client.get(
        "/api/v1/runs", params={"repo": repo, "branch": "main"}, headers=auth(service.token(repo))
    ).json()
    assert runs["count"] == 1 and runs["data"][0]["branch"] == "main"


def test_runs_without_a_branch_become_a_baseline(service: Service, repo: str) -> None:
    token = auth(service.token(repo))
    for night in range(4):
        run = make_run(
            repo=repo,
            commit=f"{night:07x}aa",
            branch=None,
            timestamp=NIGHT + timedelta(days=night),
            kernels=[make_kernel("gemv", time_s=1e-3 * (1 + 0.002 * night))],
        )
        r = service.client.post(
            "/api/v1/runs",
            content=run.model_dump_json(),
            headers={**token, "Content-Type": "application/json"},
        )
        assert r.status_code == 201, r.text
    gemv = next(k for k in r.json()["verdict"]["kernels"] if k["key"] == "gemv")
    assert gemv["baseline"]["n"] == 3, "the three nights before it are its baseline"


def test_a_pr_run_keeps_its_branch_as_given(service: Service, repo: str) -> None:
    answer = _form(service, repo, pr="7")
    assert not [n for n in answer["verdict"]["notes"] if "no branch given" in n]
