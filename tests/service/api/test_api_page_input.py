"""A dashboard page asked wrongly: HTML that says what was wrong for a browser, JSON for the API."""

from __future__ import annotations

import pytest
from factories import make_kernel
from svc_helpers import Service, nightly_run

BROWSER = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
API = {"Accept": "application/json"}


def is_html(answer, status: int) -> bool:
    return answer.status_code == status and answer.headers["content-type"].startswith("text/html")


@pytest.mark.parametrize(
    ("run_id", "words"),
    [
        ("0", "greater than or equal to 1"),
        ("-1", "greater than or equal to 1"),
        ("abc", "valid integer"),
        ("99999999999999999999", "less than or equal to 2147483647"),
    ],
)
def test_a_bad_run_id_is_a_page_for_a_browser_and_json_for_the_api(
    service: Service, run_id: str, words: str
) -> None:
    """FastAPI's check of the id answered a browser ``{"detail": ...}`` before the page ran."""
    page = service.client.get(f"/runs/{run_id}", headers=BROWSER)
    assert is_html(page, 422), page.text
    assert "<h1>Bad request</h1>" in page.text and words in page.text and "run_id" in page.text
    api = service.client.get(f"/runs/{run_id}", headers=API)
    assert api.status_code == 422 and api.headers["content-type"] == "application/json"
    detail = api.json()["detail"]
    assert detail.startswith("path run_id: Input should be ") and words in detail
    # the chart is an image an <img> asks for: its error stays as it was
    chart = service.client.get(f"/runs/{run_id}/roofline.svg", headers=BROWSER)
    assert chart.status_code == 422 and chart.headers["content-type"] == "application/json"


@pytest.mark.parametrize("base", ["", "abc", "0", '"><script>alert(1)</script>'])
def test_the_compare_runs_form_sent_wrong_is_shown_again_with_the_error(
    service: Service, base: str
) -> None:
    """The run page's "compare this run against it" form sent empty read a raw JSON 422."""
    page = service.client.get("/compare/runs", params={"base": base, "head": 55}, headers=BROWSER)
    assert is_html(page, 422), page.text
    assert 'action="/compare/runs"' in page.text and 'name="head" value="55"' in page.text
    error = page.text.split('<p id="error"')[1].split("</p>")[0]
    assert "base" in error and "Input should be" in error
    assert "<script>" not in page.text  # the value sent is shown again, escaped
    api = service.client.get("/compare/runs", params={"base": base, "head": 55}, headers=API)
    assert api.status_code == 422 and api.json()["detail"].startswith("query base: ")


def test_a_kernel_page_of_nothing_stored_is_a_404(service: Service, repo: str) -> None:
    """``/kernels`` of a repository named wrong, or a kernel it never measured, answered 200."""
    token = service.token(repo)
    assert service.upload(nightly_run(repo, 0, [make_kernel("gemm", key="gemm")]), token).is_success
    wrong = f"{repo}-typo"
    page = service.client.get("/kernels", params={"repo": wrong, "key": "gemm"}, headers=BROWSER)
    assert is_html(page, 404) and "<h1>Not found</h1>" in page.text
    assert f"no run of {wrong} is in the history store" in page.text and repo in page.text
    page = service.client.get("/kernels", params={"repo": repo, "key": "nope"}, headers=BROWSER)
    assert is_html(page, 404) and f"no measurement of kernel nope is stored for {repo}" in page.text
    api = service.client.get("/kernels", params={"repo": repo, "key": "nope"}, headers=API)
    assert api.status_code == 404 and api.json() == {
        "detail": f"no measurement of kernel nope is stored for {repo}"
    }
    # the kernel stored, in any letter case of its repository, is the page
    found = service.client.get("/kernels", params={"repo": repo.upper(), "key": "gemm"})
    assert is_html(found, 200) and "1 nightly measurements" in found.text


def test_two_runs_of_different_repositories_are_not_compared(service: Service, repo: str) -> None:
    """``/compare/runs`` compared a run of one repository with another's without a word."""
    other = f"{repo}-fork"
    kernels = [make_kernel("gemm", key="gemm")]
    ids = []
    for name in (repo, other):
        answer = service.upload(nightly_run(name, 0, kernels), service.token(name))
        ids.append(answer.json()["run_id"])
    page = service.client.get("/compare/runs", params={"base": ids[0], "head": ids[1]})
    assert is_html(page, 422), page.text
    assert f'name="base" value="{ids[0]}"' in page.text and 'id="compare-runs"' not in page.text
    error = page.text.split('<p id="error"')[1].split("</p>")[0]
    assert f"run {ids[0]} is of {repo} and run {ids[1]} of {other}" in error
    same = service.upload(nightly_run(repo, 1, kernels), service.token(repo)).json()["run_id"]
    assert is_html(service.client.get("/compare/runs", params={"base": ids[0], "head": same}), 200)


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/search?q=%00", "q"),
        ("/kernels?repo=acme/x&key=%00", "key"),
        ("/runs/39?x=%00", "x"),
        ("/compare/runs?base=1%00&head=2", "base"),
    ],
)
def test_a_nul_byte_sent_to_a_page_is_the_html_422_page(
    service: Service, path: str, name: str
) -> None:
    """The NUL guard answered a browser JSON before any page ran; API clients keep that JSON."""
    detail = f"query parameter {name}: contains a NUL byte"
    page = service.client.get(path, headers=BROWSER)
    assert is_html(page, 422), page.text
    error = page.text.split('<p id="error"')[1].split("</p>")[0]
    assert error.endswith(f">{detail}") and "\0" not in page.text
    api = service.client.get(path, headers=API)
    assert api.status_code == 422 and api.json() == {"detail": detail}
    # the chart an <img> asks for, and the API, stay JSON whoever asks
    for other in ("/runs/39/roofline.svg?x=%00", "/api/v1/runs?repo=%00"):
        answer = service.client.get(other, headers=BROWSER)
        assert answer.status_code == 422 and answer.headers["content-type"] == "application/json"


def test_an_unknown_path_is_the_404_page_for_a_browser(service: Service) -> None:
    """``/nope`` answered a browser ``{"detail":"Not Found"}``; the API's answer is unchanged."""
    page = service.client.get("/nope", headers=BROWSER)
    assert is_html(page, 404) and "<h1>Not found</h1>" in page.text
    assert "no page at /nope" in page.text and '<a href="/">Recent runs</a>' in page.text
    for path, headers in (("/nope", API), ("/api/v1/nope", BROWSER), ("/api/v1/nope", API)):
        answer = service.client.get(path, headers=headers)
        assert answer.status_code == 404 and answer.content == b'{"detail":"Not Found"}'
