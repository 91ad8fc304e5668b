"""``/digest`` of a repository with no run stored: a 404 naming those stored, not an empty page.

It answered 200 with "No nightly run of OWNER/NAME stored up to …: nothing to digest" for a
repository named wrong, as for one whose nightly job has not run yet.
"""

from __future__ import annotations

from datetime import UTC, datetime

from factories import make_kernel, make_run
from svc_helpers import Service

BROWSER = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}


def _store_nightly(service: Service, repo: str) -> None:
    run = make_run(repo=repo, timestamp=datetime.now(UTC), kernels=[make_kernel("gemv")])
    answer = service.upload(run, service.token(repo))
    assert answer.status_code in (200, 201), answer.text


def test_the_digest_of_a_repository_named_wrong_is_a_404_naming_the_stored_one(
    service: Service, repo: str
) -> None:
    _store_nightly(service, repo)
    typo = repo[:-1] + ("x" if repo[-1] != "x" else "y")  # its last letter mistyped
    # (swapping its last two letters, as before, named the repository itself 1 time in 16)
    api = service.client.get("/digest", params={"repo": typo})
    assert api.status_code == 404
    detail = api.json()["detail"]
    assert detail.startswith(f"no run of {typo} is in the history store (a repository named ")
    assert f"it holds runs of {repo}" in detail  # the closest first (PostgreSQL holds more)
    page = service.client.get("/digest", params={"repo": typo}, headers=BROWSER)
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert "<h1>Not found</h1>" in page.text and f"no run of {typo}" in page.text


def test_a_repository_with_a_token_and_no_run_is_not_found_nor_listed(
    service: Service, repo: str
) -> None:
    """A token creates the repository's row; no run of it is stored yet."""
    service.token(repo)
    answer = service.client.get("/digest", params={"repo": repo})
    assert answer.status_code == 404 and f"no run of {repo}" in answer.json()["detail"]
    assert f"runs of {repo}" not in answer.json()["detail"]


def test_a_repository_with_pr_runs_only_has_nothing_to_digest(service: Service, repo: str) -> None:
    pr = make_run(repo=repo, kind="pr", pull_request=3, timestamp=datetime.now(UTC))
    assert service.upload(pr, service.token(repo)).status_code in (200, 201)
    page = service.client.get("/digest", params={"repo": repo.upper()})
    assert page.status_code == 200
    assert f"<strong>No nightly run of {repo.upper()} stored up to " in page.text
