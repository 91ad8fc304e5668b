"""A check run GitHub refuses after the service posted the sticky comment: posted, named.

``roofguard comment`` keeps ``posted=true`` and the comment's URL and names the check run;
the service answered ``posted: false`` with ``GitHub failed: ...``, as if nothing had
reached the PR, while its comment stood there.
"""

from __future__ import annotations

from factories import make_kernel, make_run
from github_server import FakeGitHub
from svc_helpers import Service, auth

SHA = "feedfacecafe0123456789abcdef0123456789ab"
PR = 7
NO_COMMIT = {
    "message": "Validation Failed",
    "errors": [{"resource": "CheckRun", "message": f"No commit found for SHA: {SHA}"}],
}


def _post_pr_run(service: Service, repo: str) -> dict:
    run = make_run(
        repo=repo, commit=SHA, kind="pr", pull_request=PR, kernels=[make_kernel("gemv_0")]
    )
    headers = {**auth(service.token(repo)), "Content-Type": "application/json"}
    answer = service.client.post(
        "/api/v1/runs?post=true", content=run.model_dump_json(), headers=headers
    )
    assert answer.status_code == 201, answer.text
    return answer.json()


def test_a_check_run_refused_after_the_comment_is_posted_naming_the_check(
    make_service, repo: str, github_server: FakeGitHub
) -> None:
    service = make_service(github_token="ghs_service_token", github_api_url=github_server.url)
    github_server.fail_next("POST", r"/check-runs$", 422, body=NO_COMMIT)
    answer = _post_pr_run(service, repo)
    (comment,) = github_server.pr_comments(PR)
    assert not github_server.check_runs
    assert answer["posted"] is True, answer["post_detail"]
    check = f"check run on commit {SHA[:12]} of {repo}"
    assert answer["post_detail"] == (
        f"comment posted ({comment['html_url']}), but not the {check}: "
        f"GitHub: 422 Validation Failed: No commit found for SHA: {SHA}"
    )
