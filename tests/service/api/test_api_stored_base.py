"""A stored run is judged again against the baseline its upload chose, not the configured one.

An upload's ``base_branch`` and ``base_sha`` chose its baseline, and nothing kept them: the
run's page, ``GET /verdict`` and the same upload again judged it against the configured
branch's newest runs, beside findings stored from the other baseline. A PR 15x slower,
answered NOT JUDGED against ``release/2.0``, read PASS and ``unchanged`` on its page; one
cut at its merge base listed a missing-kernel finding for a kernel its page's table lacked.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from factories import make_kernel, make_run
from remeasure_data import gemv_report, stable_history
from svc_helpers import NIGHT, Service, auth, nightly_run

NIGHTS = 6


def _kernels(gemm_s: float = 1e-3, *, norm: bool = True) -> list:
    gemm = make_kernel("gemm", time_s=gemm_s)
    return [gemm, make_kernel("norm", time_s=2e-4)] if norm else [gemm]


def _history(service: Service, repo: str) -> str:
    """Nights 0-5 of ``repo`` on main; the token that uploads them."""
    token = service.token(repo)
    for night in range(NIGHTS):
        gemm_s = 1e-3 * (1 + 0.002 * (night % 3))
        assert service.upload(nightly_run(repo, night, _kernels(gemm_s)), token).status_code == 201
    return token


def _pr(repo: str, kernels: list, days: int = NIGHTS + 2) -> str:
    run = make_run(
        repo=repo,
        commit="badc0de",
        kind="pr",
        pull_request=7,
        branch="feature",
        timestamp=NIGHT + timedelta(days=days),
        kernels=kernels,
    )
    return run.model_dump_json()


def _upload(service: Service, token: str, body: str, **query: str) -> Any:
    headers = {**auth(token), "Content-Type": "application/json"}
    return service.client.post("/api/v1/runs", params=query, content=body, headers=headers)


def _stored(service: Service, token: str, run_id: int) -> dict:
    answer = service.client.get(f"/api/v1/runs/{run_id}/verdict", headers=auth(token))
    assert answer.status_code == 200, answer.text
    return answer.json()["verdict"]


def _kernel(verdict: dict, key: str) -> dict | None:
    return next((k for k in verdict["kernels"] if k["key"] == key), None)


def _judged(verdict: dict) -> tuple[object, ...]:
    """What a verdict concludes: the re-measurements' figures are the upload's answer alone."""
    statuses = {k["key"]: k["status"] for k in verdict["kernels"]}
    return verdict["conclusion"], verdict["findings"], statuses, verdict["baseline"]["commits"]


def test_a_run_judged_against_another_branch_reads_so_on_its_page(
    service: Service, repo: str
) -> None:
    token = _history(service, repo)
    body = _pr(repo, _kernels(15e-3))
    first = _upload(service, token, body, base_branch="release/2.0")
    assert first.status_code == 201, first.text
    run_id, verdict = first.json()["run_id"], first.json()["verdict"]
    assert verdict["baseline"]["runs"] == 0 and _kernel(verdict, "gemm")["status"] == "new"
    assert _stored(service, token, run_id) == verdict
    page = service.client.get(f"/runs/{run_id}").text
    assert "not judged" in page.lower() and "unchanged" not in page
    kernels = service.client.get(
        f"/api/v1/runs/{run_id}/verdict/kernels", headers=auth(token)
    ).json()
    assert [k["status"] for k in kernels["data"] if k["key"] == "gemm"] == ["new"]
    again = _upload(service, token, body)  # the CI job re-run, without its query
    assert again.status_code == 200 and again.json()["verdict"] == verdict


def test_a_pr_cut_at_its_merge_base_keeps_that_baseline_on_its_page(
    service: Service, repo: str
) -> None:
    token = _history(service, repo)
    merge_base = f"{NIGHTS - 1:07x}aa"  # nightly_run's commit of the last night before it left
    late = nightly_run(repo, NIGHTS + 5, _kernels(norm=False))  # merged after the PR left
    assert service.upload(late, token).status_code == 201
    body = _pr(repo, _kernels(norm=False), days=NIGHTS + 14)
    first = _upload(service, token, body, base_sha=merge_base)
    assert first.status_code == 201, first.text
    run_id, verdict = first.json()["run_id"], first.json()["verdict"]
    assert _kernel(verdict, "norm")["status"] == "missing"
    assert [f["kernel"] for f in verdict["findings"] if f["rule"] == "missing-kernel"] == ["norm"]
    stored = _stored(service, token, run_id)
    assert stored["baseline"]["commits"] == verdict["baseline"]["commits"]
    assert _kernel(stored, "norm") == _kernel(verdict, "norm")
    assert stored["notes"] == verdict["notes"] and stored == verdict
    assert _upload(service, token, body).json()["verdict"] == verdict


def test_an_upload_naming_another_baseline_gets_its_answer_and_the_page_keeps_the_stored(
    service: Service, repo: str
) -> None:
    token = _history(service, repo)
    body = _pr(repo, _kernels(15e-3))
    first = _upload(service, token, body, base_branch="release/2.0").json()
    on_main = _upload(service, token, body, base_branch="main")
    assert on_main.status_code == 200, on_main.text
    verdict = on_main.json()["verdict"]
    assert verdict["baseline"]["runs"] == NIGHTS
    assert _kernel(verdict, "gemm")["status"] in ("regressed", "suspect")
    (note,) = [n for n in verdict["notes"] if "as asked, and not stored" in n]
    assert "the main runs" in note and "the release/2.0 runs" in note
    assert _stored(service, token, first["run_id"]) == first["verdict"]
    runs = service.client.get(
        "/api/v1/runs", params={"repo": repo, "pr": 7}, headers=auth(token)
    ).json()
    assert runs["data"][0]["judged"] is False


def _remeasured(
    service: Service, repo: str, token: str, run: Path, reruns: tuple[Path, ...], **query: str
) -> Any:
    files = [("files", (run.name, run.read_bytes(), "application/json"))]
    files += [("reruns", (p.name, p.read_bytes(), "application/json")) for p in reruns]
    data = {"repo": repo, "commit": "c0009", "pr": "7"}
    params = {"remeasure": "true", **query}
    return service.client.post(
        "/api/v1/runs", params=params, headers=auth(token), data=data, files=files
    )


def test_the_page_shows_the_verdict_re_measurements_stored_since_it_was_viewed(
    service: Service, repo: str, tmp_path: Path
) -> None:
    stable_history(tmp_path, service.settings.database_url, repo)
    token = service.token(repo)
    pr = gemv_report(tmp_path / "pr.json", 2.0)
    screened = _remeasured(service, repo, token, pr, ())
    run_id = screened.json()["run_id"]
    assert _stored(service, token, run_id)["conclusion"] == "warn"  # a suspect, viewed
    again = gemv_report(tmp_path / "again.json", 2.0)
    confirmed = _remeasured(service, repo, token, pr, (again,)).json()["verdict"]
    assert confirmed["conclusion"] == "fail"
    assert _judged(_stored(service, token, run_id)) == _judged(confirmed)


def test_re_measurements_against_another_baseline_replace_the_stored_one(
    service: Service, repo: str, tmp_path: Path
) -> None:
    stable_history(tmp_path, service.settings.database_url, repo)
    token = service.token(repo)
    pr = gemv_report(tmp_path / "pr.json", 2.0)
    first = _remeasured(service, repo, token, pr, (), base_branch="release/2.0").json()
    assert _stored(service, token, first["run_id"]) == first["verdict"]  # nothing judged
    again = gemv_report(tmp_path / "again.json", 2.0)
    on_main = _remeasured(service, repo, token, pr, (again,), base_branch="main").json()
    assert on_main["verdict"]["conclusion"] == "fail" and on_main["verdict"]["baseline"]["runs"]
    assert not [n for n in on_main["verdict"]["notes"] if "as asked" in n]
    assert _judged(_stored(service, token, first["run_id"])) == _judged(on_main["verdict"])
