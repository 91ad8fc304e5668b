"""``roofguard comment --run-url``: an absolute http(s) URL, or refused before anything is posted.

GitHub answers a check run whose ``details_url`` is not an http(s) URL with 422, after the
sticky comment was written: half of the post landed. A ``javascript:`` link in the comment is
a trap. Such a URL was passed on unchecked.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from github_server import FakeGitHub, github_server_fixture
from test_github_cli import PR, REPO, SHA, actions_env, write_verdict
from verdict_factory import regression_verdict

from service.cli import run

#: The fake GitHub's fixture (``github_server``), imported for these tests.
FIXTURES = (github_server_fixture,)

BAD_URLS = [
    "javascript:alert(document.cookie)",
    "ftp://dash.example.com/runs/7",
    "dash.example.com/runs/7",
    "/runs/7",
    "https://",
    "https://dash.example.com/runs/7 x",
    "http://[::1/runs/7",
]


def _comment(server: FakeGitHub, tmp: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    """``roofguard comment`` in this process, in an Actions job that posts to ``server``."""
    for name, value in actions_env(server, tmp).items():
        monkeypatch.setenv(name, value)
    verdict = write_verdict(tmp, regression_verdict())
    return run(["comment", "--repo", REPO, "--verdict", str(verdict), "--sha", SHA, *args])


@pytest.mark.parametrize("url", BAD_URLS)
@pytest.mark.parametrize("dry_run", [False, True])
def test_a_run_url_not_http_is_refused_before_posting(
    github_server: FakeGitHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    url: str,
    dry_run: bool,
) -> None:
    extra = ["--dry-run"] if dry_run else []
    assert _comment(github_server, tmp_path, monkeypatch, "--run-url", url, *extra) == 2
    out, err = capsys.readouterr()
    assert err == f"roofguard: error: --run-url: not an absolute http(s) URL: {url!r}\n"
    assert not out and not github_server.calls()
    assert not (tmp_path / "output").exists() and not (tmp_path / "summary.md").exists()
    assert not (tmp_path / "artifact").exists()


def test_an_http_run_url_links_the_comment_and_the_check(
    github_server: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = "https://dash.example.com/runs/7"
    assert _comment(github_server, tmp_path, monkeypatch, "--run-url", url, "--pr", str(PR)) == 0
    (posted,) = github_server.pr_comments(PR)
    assert f"[run page]({url})" in posted["body"]
    assert [run["details_url"] for run in github_server.check_runs] == [url]


def test_an_empty_run_url_is_none(
    github_server: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _comment(github_server, tmp_path, monkeypatch, "--run-url", "", "--pr", str(PR)) == 0
    assert "run page" not in github_server.pr_comments(PR)[0]["body"]
    assert "details_url" not in github_server.check_runs[0]
