"""A stored run's verdict kernels a page at a time (``/runs/{id}/verdict/kernels``)."""

from __future__ import annotations

from factories import make_kernel
from svc_helpers import Service, auth, nightly_run, pr_run


def kernels(slowed: int = 0, n: int = 7):
    """``n`` kernels; the first ``slowed`` of them 1.6 times slower."""
    return [
        make_kernel(f"gemv_{i}", time_s=1e-3 * (1 + 0.002 * (i % 3)) * (1.6 if i < slowed else 1))
        for i in range(n)
    ]


def judged_pr(service: Service, repo: str, token: str) -> dict:
    for night in range(8):
        assert service.upload(nightly_run(repo, night, kernels()), token).status_code == 201
    return service.upload(pr_run(repo, kernels(slowed=3)), token).json()


def page(service: Service, run_id: int, token: str, **params) -> dict:
    answer = service.client.get(
        f"/api/v1/runs/{run_id}/verdict/kernels", params=params, headers=auth(token)
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_pages_of_kernels_are_the_verdicts_kernels_in_order(service, repo) -> None:
    token = service.token(repo)
    run_id = judged_pr(service, repo, token)["run_id"]
    whole = service.client.get(f"/api/v1/runs/{run_id}/verdict", headers=auth(token)).json()
    pages = [page(service, run_id, token, limit=3, offset=o) for o in (0, 3, 6, 9)]
    assert [p["count"] for p in pages] == [3, 3, 1, 0]
    assert {p["total"] for p in pages} == {7}
    assert [k for p in pages for k in p["data"]] == whole["verdict"]["kernels"]


def test_a_status_filter_keeps_only_those_kernels(service, repo) -> None:
    token = service.token(repo)
    run_id = judged_pr(service, repo, token)["run_id"]
    regressed = page(service, run_id, token, status="regressed")
    assert regressed["total"] == regressed["count"] == 3
    assert {k["key"] for k in regressed["data"]} == {"gemv_0", "gemv_1", "gemv_2"}
    both = page(service, run_id, token, status=["regressed", "unchanged"])
    assert both["total"] == 7
    assert {k["status"] for k in both["data"]} == {"regressed", "unchanged"}


def test_another_repositorys_token_and_an_unknown_status_are_refused(service, repo) -> None:
    token = service.token(repo)
    run_id = judged_pr(service, repo, token)["run_id"]
    url = f"/api/v1/runs/{run_id}/verdict/kernels"
    stranger = service.client.get(url, headers=auth(service.token("acme/other", write=False)))
    assert stranger.status_code == 404
    unknown = service.client.get(url, params={"status": "slow"}, headers=auth(token))
    assert unknown.status_code == 422 and "status" in unknown.text
